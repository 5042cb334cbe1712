# The fault-injection sweeps of one boot's log (tests/vmtest.sh runs this on
# it): the points each operation reached, how many failed it and how many
# it absorbed, as one "note:" line (the programs themselves fail on a wrong
# errno, on an absorbed failure of one of our own points and on fewer
# points than recorded).  The kexec sweep (guest/kexec-load.c -F) ends with
# the try that went through: a fault injected in it (a FAULT_INJECTION
# message after the last "kexec try" line) was absorbed, which fails the
# boot at one of our own points (fail_function, at our hooks) and is
# counted otherwise (an allocation of the shutdown path after LUO's
# freeze, whose failure it logs and goes on).  A "bad:" line says why the
# sweep fails the boot.  kexec-load writes the sweep's lines to the kernel
# log, so they come whole and in order with the kernel's messages of each
# try (tests/vmtest.sh logs kernel lines apart from program lines).
function end_try() {
	# The try that went through: the kernel said so.
	if (pending && !started)
		bad = bad " kexec try " try " neither failed nor started the next kernel;"
	if (pending && fi == "fail_function")
		bad = bad " kexec try " try " went through with a fault injected;"
	else if (pending && fi != "")
		kabs++
	pending = 0
}
match($0, /# fault-injection: [a-z]+: [0-9]+ points, [0-9]+ failed, [0-9]+ absorbed/) {
	split(substr($0, RSTART, RLENGTH), f, " ")
	sub(/:$/, "", f[3])
	out = out f[3] " " f[4] " (" f[6] " failed, " f[8] " absorbed), "
}
match($0, /HLU: fault-injection kexec try [0-9]+/) {
	end_try()
	split(substr($0, RSTART, RLENGTH), f, " ")
	try = f[5]; pending = 1; fi = ""; started = 0; tries++
}
pending && /kexec_core: Starting new kernel/ { started = 1 }
match($0, /HLU: fault-injection kexec: at least [0-9]+ points of ours/) {
	split(substr($0, RSTART, RLENGTH), f, " ")
	want = f[6]
}
# The sweep stopped on an error, which fails the boot by itself.
pending && /HLU: error:/ { pending = 0 }
pending && match($0, /name [a-z_]+, interval/) {
	fi = substr($0, RSTART + 5, RLENGTH - 15)
}
match($0, /HLU: fault-injection kexec point [0-9]+ covered/) {
	pending = 0; kcov++
	if ($0 ~ /covered: fail_function:/)
		own++
}
/Linux version / { end_try() }
END {
	end_try()
	if (want != "" && own < want)
		bad = bad " " own + 0 " freezes failed in the kexec sweep, not " want ";"
	if (tries > 0)
		out = out "kexec " kcov + kabs " (" kcov + 0 " failed, " kabs + 0 " absorbed), "
	if (out != "")
		printf "note: fault injection: %spoints reached per operation\n", out
	if (bad != "")
		printf "bad: fault injection:%s\n", bad
}
