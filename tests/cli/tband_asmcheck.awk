# tests/cli/tband_vm.sh, tband_vm_asmcheck firmware: each value marker 200
# (2^28 + kind * 256 + id) announces the next event, which must follow with
# that id at most 20 us later; time never goes back; with every=N, a
# dropped_evt_cnt follows every N events. -v nwant=<events announced>
function num(key) { if (!match($0, "\"" key "\":[0-9]+")) return -1; return substr($0, RSTART + length(key) + 3, RLENGTH - length(key) - 3) + 0 }
BEGIN { split("evtmarker evtmarker evtmarker_begin evtmarker_end isr_enter isr_exit evtmarker valmarker", name, " ") }
function sval(   m) { if (!match($0, /"val":-?[0-9]+/)) return "none"; return substr($0, RSTART + 6, RLENGTH - 6) }
{ match($0, /"evt":"[a-z_]+"/); evt = substr($0, RSTART + 7, RLENGTH - 8); ts = num("ts") }
ts < 0 { next } # metadata
{ if (ts < last) { print "time goes back at line " NR; bad++ } last = ts }
evt == "core_id" { seen = 0; next }
evt == "dropped_evt_cnt" { if (every && seen != every) { print "a report after " seen " events at line " NR; bad++ } seen = 0; reports++; next }
{ seen++ }
evt == "valmarker" && num("valmarker_id") == 201 { wantv = sval() - 1099511627776; next } # 2^40
evt == "valmarker" && num("valmarker_id") == 200 { v = num("val") - 268435456; want = name[int(v / 256) + 1]; wid = v % 256; vts = ts; pending = 1; next }
pending { pending = 0; id = (evt ~ /^isr/) ? num("isr_id") : evt == "valmarker" ? num("valmarker_id") : num("evtmarker_id")
          if (evt == "valmarker" && sval() + 0 != wantv) { print "line " NR ": want value " wantv ": " $0; bad++ }
          if (evt != want || id != wid || ts - vts > 20000) { print "line " NR ": want " want " " wid " after " vts ": " $0; bad++ } else ok++ }
END { if (ok != nwant) { print ok " events checked, want " nwant; bad++ }
      if (every && (reports < 1 || seen >= every)) { print reports " reports, " seen " events after the last"; bad++ }
      exit bad != 0 }
