package config

import (
	"fmt"
	"os"
	"time"
)

// Config holds the settings read at start-up.
type Config struct {
	ListenAddr  string
	DatabaseURL string
	Timeout     time.Duration
}

// LoadConfig reads the configuration from the environment, with defaults.
func LoadConfig() (Config, error) {
	cfg := Config{ListenAddr: ":8080", Timeout: 30 * time.Second}
	if v := os.Getenv("APP_LISTEN"); v != "" {
		cfg.ListenAddr = v
	}
	cfg.DatabaseURL = os.Getenv("DATABASE_URL")
	if cfg.DatabaseURL == "" {
		return Config{}, fmt.Errorf("DATABASE_URL is not set")
	}
	return cfg, nil
}
