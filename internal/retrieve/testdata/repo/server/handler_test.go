package server

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandleLoginBadBody(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/login", strings.NewReader("{"))
	HandleLogin(nil)(rec, req)
	if rec.Code != 400 {
		t.Fatalf("login with a bad body: got %d", rec.Code)
	}
}
