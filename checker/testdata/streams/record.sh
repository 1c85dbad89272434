#!/bin/sh
# record.sh re-records checker/testdata/<case>.jsonl from the sources here,
# the way runGroup builds and runs an exercise: `go test -c -json` in a
# throwaway module example.com/lab31, then, when that built, the binary
# under `go tool test2json` in the package's folder. The throwaway folder's
# path is replaced by BUILDDIR. Prints each case's exit status (runGroup's
# package verdict). Run from this folder: sh record.sh
set -u
out=$(cd .. && pwd)
for c in pass fail compile-error panic timeout race; do
	tmp=$(mktemp -d)
	mkdir -p "$tmp/results" "$tmp/bin"
	cp go.mod.txt "$tmp/go.mod"
	cp "$c/reconciler.go" check/results_check_test.go "$tmp/results/"
	race=""; timeout=1m
	[ "$c" = race ] && race=-race
	[ "$c" = timeout ] && timeout=3s
	(cd "$tmp" && go test -c -json $race -o bin/ ./results) > "$tmp/stream.jsonl" 2>/dev/null
	code=$?
	if [ -x "$tmp/bin/results.test" ]; then
		(cd "$tmp/results" && go tool test2json -t -p example.com/lab31/results ../bin/results.test \
			-test.v=test2json -test.count=1 -test.paniconexit0 -test.timeout=$timeout) >> "$tmp/stream.jsonl" 2>/dev/null
		code=$?
	fi
	sed "s|$tmp|BUILDDIR|g" "$tmp/stream.jsonl" > "$out/$c.jsonl"
	echo "$c: exit $code"
	rm -rf "$tmp"
done
