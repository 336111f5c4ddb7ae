package process

import (
	"testing"

	"github.com/flameox/flameox/pkg/adapter/adaptertest"
)

func TestConformance(t *testing.T) { adaptertest.Run(t, New()) }
