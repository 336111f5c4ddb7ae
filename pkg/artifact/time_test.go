package artifact

import "time"

func timeAfter() time.Time { return time.Now().Add(time.Hour) }
