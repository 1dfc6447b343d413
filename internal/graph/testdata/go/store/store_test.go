package store

import "testing"

func TestOpen(t *testing.T) { _ = Open() + helper() }
