#!/usr/bin/env bash
# The command line and its documentation agree: every long option that a
# command's or subcommand's --help lists appears in docs/cli.md, every
# command `sonde --help` lists has a section there, and every command and
# subcommand answers --help with exit 0 and a usage line.
set -u
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
doc=$SONDE_SRC/docs/cli.md
[ -r "$doc" ] || { echo "FAIL: no $doc"; exit 1; }

# the commands, from the top-level help (two-space indent, then the name)
cmds=$("$SONDE" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p')
[ -n "$cmds" ] && ok || bad "sonde --help lists no command"
for c in $cmds; do
  grep -q "^## \`sonde $c\`" "$doc" && ok || bad "docs/cli.md has no section '## \`sonde $c\`'"
done

# subcommands, from each command's usage lines ("sonde CMD SUB ...")
helps=()
for c in $cmds; do
  helps+=("$c")
  subs=$("$SONDE" "$c" --help 2>&1 | sed -n "s/^.*sonde $c \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p" | sort -u)
  for s in $subs; do helps+=("$c $s"); done
done
echo "${#helps[@]} commands and subcommands"
[ "${#helps[@]}" -gt 20 ] && ok || bad "only ${#helps[@]} commands and subcommands found"

for h in "${helps[@]}"; do
  # shellcheck disable=SC2086
  out=$("$SONDE" $h --help 2>&1)
  rc=$?
  [ $rc -eq 0 ] && ok || bad "sonde $h --help: exit $rc"
  grep -q "^usage: sonde" <<<"$out" && ok || bad "sonde $h --help: no usage line"
  for o in $(grep -oE -- '--[a-z][a-z0-9-]+' <<<"$out" | sort -u); do
    [ "$o" = --help ] && continue
    grep -qE -- "$o([^a-z0-9-]|\$)" "$doc" && ok || bad "sonde $h: option $o is not in docs/cli.md"
  done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
