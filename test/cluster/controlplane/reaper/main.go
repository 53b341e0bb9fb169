// Command reaper runs a program that dies with the process that started it.
//
// The cluster tests start etcd, kube-apiserver and kube-controller-manager as children of a Node.js
// test worker. If that worker is killed outright (a crashed test run, a second Ctrl-C, a CI timeout),
// Node's exit handlers never run and the control plane would outlive it, holding ports and memory. The
// reaper asks the kernel to SIGKILL it when its parent goes (PR_SET_PDEATHSIG) and then becomes the
// program by exec, which keeps that request.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// The parent-death signal belongs to the thread that sets it; exec must run on that same thread.
func init() { runtime.LockOSThread() }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: reaper PROGRAM [ARG...]")
		os.Exit(2)
	}
	parent := os.Getppid()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "reaper: prctl(PR_SET_PDEATHSIG): %v\n", errno)
		os.Exit(1)
	}
	// The parent may have gone between our start and the prctl call; then nobody would kill us.
	if os.Getppid() != parent {
		os.Exit(1)
	}
	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "reaper: %v\n", err)
		os.Exit(127)
	}
	if err := syscall.Exec(path, os.Args[1:], os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "reaper: exec %s: %v\n", path, err)
		os.Exit(126)
	}
}
