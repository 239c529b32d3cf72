// goprof - a small Go program that profiles itself with runtime/pprof, the
// producer for test_pprof_input.sh.  Usage: goprof cpu|heap OUT [SECONDS]
// cpu: a CPU profile of three busy functions with different shares (and
// one inlined helper); heap: a heap profile (alloc/inuse objects and space:
// four sample types).
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

var sink uint64
var keep [][]byte

//go:noinline
func spinA(n int) uint64 {
	var x uint64 = 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func spinB(n int) uint64 { return spinA(n) + mix(uint64(n)) }

// mix is small enough to be inlined into its callers.
func mix(v uint64) uint64 { return v ^ (v >> 7) }

//go:noinline
func spinC(n int) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		x += mix(uint64(i))
	}
	return x
}

//go:noinline
func work(deadline time.Time) {
	for time.Now().Before(deadline) {
		sink += spinA(200000)
		sink += spinB(100000)
		sink += spinC(300000)
	}
}

//go:noinline
func allocSmall(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 64))
	}
}

//go:noinline
func allocBig(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 1<<16)
		if i%2 == 0 {
			keep = append(keep, b)
		}
	}
}

func main() {
	if len(os.Args) < 3 {
		os.Stderr.WriteString("usage: goprof cpu|heap OUT [SECONDS]\n")
		os.Exit(2)
	}
	f, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	defer f.Close()
	secs := 1.0
	if len(os.Args) > 3 {
		secs, _ = strconv.ParseFloat(os.Args[3], 64)
	}
	switch os.Args[1] {
	case "cpu":
		if err := pprof.StartCPUProfile(f); err != nil {
			panic(err)
		}
		work(time.Now().Add(time.Duration(secs * float64(time.Second))))
		pprof.StopCPUProfile()
	case "heap":
		runtime.MemProfileRate = 512
		allocSmall(20000)
		allocBig(200)
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			panic(err)
		}
	}
}
