package main

import (
	"fmt"

	"example.com/app/missing"
	"example.com/app/store"
	"example.com/app/tools/x"
)

func main() { fmt.Println(store.Open(), store.Item{}, x.Run()) }
