package server

import (
	"net/http"

	"example.com/app/store"
)

// NewRouter wires every route of the HTTP API.
func NewRouter(users *store.UserStore) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", HandleLogin(users))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	return mux
}
