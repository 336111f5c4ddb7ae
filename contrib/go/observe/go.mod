module github.com/flameox/flameox/contrib/go/observe

go 1.22
