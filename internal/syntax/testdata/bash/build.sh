#!/usr/bin/env bash
source ./lib/common.sh
. "$HOME/.env"

build() {
  log "building $TARGET"
  make all
}

function clean {
  rm -rf out
}

build && clean
