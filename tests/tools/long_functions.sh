#!/bin/sh
# long_functions.sh [MAX] FILE...: every function longer than MAX lines
# (default 100), as "file:line name length".  A function is what style(9)
# writes: its name at the start of a line followed by '(', its body from a
# '{' alone at column 0 to the next '}' at column 0; its length runs from
# the line of its name to that '}' (the measure of the before-stop hook).
max=100
case $1 in [0-9]*) max=$1; shift ;; esac
awk -v max="$max" '
FNR == 1 { name = ""; start = 0 }
/^[A-Za-z_][A-Za-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name); line = FNR }
/^\{/ && name != "" { start = FNR }
/^\}/ && start > 0 {
	n = FNR - line
	if (n > max)
		printf "%s:%d %s %d\n", FILENAME, line, name, n
	start = 0; name = ""
}' "$@"
