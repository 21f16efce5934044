# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# Reads the text 'protoc --decode=traced_test.Trace' prints for a file of
# 'tracectl export --format perfetto' and prints one line per track
# event, with every interned name and track resolved:
#
#   I TS PID TID NAME [KEY=VALUE...]     an instant on a thread's track
#   B TS PID TRACKNAME NAME              a slice begins on a process lane
#   E TS PID TRACKNAME                   and ends
#   B TS PID tid=TID NAME                a slice begins on a thread's track
#   E TS PID tid=TID                     (a function call) and ends
#   T PID TID THREADNAME                 a thread's track
#   P PID PROCESSNAME                    a process's track
#
# Values: uint and int in decimal, pointers as 0x..., bools as true or
# false, strings as protoc quotes them.  Used by tests/integration/057
# and 128.
function flush_event() {
	if (!in_event)
		return
	if (type == "TYPE_INSTANT") {
		line = "I " ts " " tpid[track] " " ttid[track] " " names[name]
		for (i = 1; i <= nann; i++)
			line = line " " anames[ann_name[i]] "=" ann_value[i]
		print line
	} else if (type ~ /^TYPE_SLICE_(BEGIN|END)$/) {
		if (track in ttid)
			where = tpid[track] " tid=" ttid[track]
		else
			where = ppid[tparent[track]] " " tname[track]
		if (type == "TYPE_SLICE_BEGIN")
			print "B " ts " " where " " names[name]
		else
			print "E " ts " " where
	}
	in_event = 0
}
/^packet \{/ { ts = ""; depth = 1; next }
/^  timestamp: / { ts = $2; next }
/^  track_event \{/ { in_event = 1; nann = 0; type = ""; name = ""; track = ""; next }
/^    type: / { type = $2; next }
/^    name_iid: / { name = $2; next }
/^    track_uuid: / { track = $2; next }
/^    debug_annotations \{/ { nann++; next }
/^      name_iid: / { ann_name[nann] = $2; next }
/^      (uint|int)_value: / { ann_value[nann] = $2; next }
/^      bool_value: / { ann_value[nann] = $2; next }
/^      pointer_value: / { ann_value[nann] = sprintf("0x%x", $2); next }
/^      string_value: / { sub(/^      string_value: /, ""); ann_value[nann] = $0; next }
/^  track_descriptor \{/ { desc = 1; duuid = ""; dparent = ""; dname = ""; dpid = ""; dtid = ""; dkind = ""; next }
/^    uuid: / { duuid = $2; next }
/^    parent_uuid: / { dparent = $2; next }
/^    name: / { sub(/^    name: /, ""); dname = $0; next }
/^    process \{/ { dkind = "P"; next }
/^    thread \{/ { dkind = "T"; next }
/^      pid: / { dpid = $2; next }
/^      tid: / { dtid = $2; next }
/^      (process|thread)_name: / { sub(/^      (process|thread)_name: /, ""); dname = $0; next }
/^    (event_names|event_categories|debug_annotation_names) \{/ { kind = $1; next }
/^      iid: / { iid = $2; next }
/^      name: / {
	sub(/^      name: "/, ""); sub(/"$/, "")
	if (kind == "event_names") names[iid] = $0
	else if (kind == "debug_annotation_names") anames[iid] = $0
	next
}
/^\}/ {
	flush_event()
	if (desc) {
		if (dkind == "P") { ppid[duuid] = dpid; print "P " dpid " " dname }
		else if (dkind == "T") { tpid[duuid] = dpid; ttid[duuid] = dtid; print "T " dpid " " dtid " " dname }
		else { tparent[duuid] = dparent; tname[duuid] = dname }
		desc = 0
	}
	next
}
