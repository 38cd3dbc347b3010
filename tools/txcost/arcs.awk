# arcs.awk: the call arcs of a callgrind output file (written with
# --compress-strings=no --compress-pos=no), one line per caller and callee:
#   CALLER CALLEE CALLS IR
# CALLS is how many calls the arc made (callgrind counts calls made while
# collection was off too), IR the inclusive Ir collected for them.  A
# function's clone suffixes (.constprop.0, .isra.0) and callgrind's context
# suffixes ('2) are dropped, and the arcs of one pair (several call sites)
# are summed.
function base(name) {
	sub(/^\([0-9]+\) /, "", name)
	sub(/[.'].*$/, "", name)
	return name
}
/^fn=/ { fn = base(substr($0, 4)) }
/^cfn=/ { cfn = base(substr($0, 5)) }
/^calls=/ {
	split(substr($0, 7), c, " ")
	if ((getline line) <= 0)
		exit 1
	split(line, v, " ")
	key = fn " " cfn
	calls[key] += c[1]
	ir[key] += v[2]
}
END {
	for (key in calls)
		print key, calls[key], ir[key]
}
