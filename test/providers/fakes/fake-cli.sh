#!/bin/sh
# Stands in for kind, minikube, helm, kubectl and docker in the provider contract tests: each is a
# symlink to this script, which is the tool it was called as. A shell script, not Node, and one that
# starts no other program unless a reply has to be looked up (printf, test and read are builtins):
# the tests make over a hundred calls, and every process started costs.
# Records each call under $NETREPRO_FAKE_LOG in files named after it (its pid): NAME.tool, NAME.argv
# (each word NUL-terminated), NAME.stdin (only for `tee`: reading it for every call could wait on an
# open pipe), NAME.config (the file handed over with --config: it is removed with the run directory),
# and NAME as a line of `order`, appended as the call starts.
# Answers from $NETREPRO_FAKE_REPLIES/NNNN/ (tool, args: the leading words one per line, stdout,
# stderr, code); the first reply in NNNN order whose tool and leading words match wins. A reply with a
# file `once` answers one call: it is marked `used` and skipped from then on.
PATH=/usr/bin:/bin # the test puts only the fakes on PATH
tool=${0##*/}
name=$$
# a pid given out again within one test's calls: the earlier call keeps its files
while [ -e "$NETREPRO_FAKE_LOG/$name.tool" ]; do name="$name+"; done
call="$NETREPRO_FAKE_LOG/$name"
printf '%s' "$tool" >"$call.tool"
printf '%s\0' "$@" >"$call.argv"
printf '%s\n' "$name" >>"$NETREPRO_FAKE_LOG/order"
config= next= tee=
for word in "$@"; do
  [ -n "$next" ] && config=$word && next=
  [ "$word" = --config ] && next=1
  [ "$word" = tee ] && tee=1
done
[ -n "$tee" ] && cat >"$call.stdin"
[ -n "$config" ] && cat "$config" >"$call.config"
for reply in "$NETREPRO_FAKE_REPLIES"/*/; do
  [ -f "${reply}tool" ] && [ ! -f "${reply}used" ] || continue
  IFS= read -r replyTool <"${reply}tool" || :
  [ "$replyTool" = "$tool" ] || continue
  n=0 matched=1
  while IFS= read -r expected; do
    n=$((n + 1))
    [ "$n" -le $# ] && eval "word=\${$n}" && [ "$word" = "$expected" ] || { matched= && break; }
  done <"${reply}args"
  [ -n "$matched" ] || continue
  [ -f "${reply}once" ] && : >"${reply}used"
  [ -s "${reply}stdout" ] && cat "${reply}stdout"
  [ -s "${reply}stderr" ] && cat "${reply}stderr" >&2
  IFS= read -r code <"${reply}code" || :
  exit "$code"
done
exit 0
