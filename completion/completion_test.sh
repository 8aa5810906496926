#!/usr/bin/env bash
# completion_test.sh: the bash completion of logctl, logsinkd and
# logsink-forward, driven as bash drives it (COMP_WORDS, COMP_CWORD, the
# function complete -p names) against the built binaries.
# usage: completion_test.sh logsink.bash BIN_DIR
set -uo pipefail
script=$1
export PATH="$2:$PATH"
fail=0
# shellcheck source=/dev/null
source "$script"
compopt() { :; }  # only valid while bash itself completes
# expect "words..." -- wanted... : the last word is the one being completed.
expect() {
  local words=() want=()
  while [ "$1" != -- ]; do words+=("$1"); shift; done
  shift
  want=("$@")
  COMP_WORDS=("${words[@]}")
  COMP_CWORD=$((${#words[@]} - 1))
  COMPREPLY=()
  local fn
  fn=$(complete -p "${words[0]}" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
  "$fn"
  local got=" ${COMPREPLY[*]} " w
  for w in "${want[@]}"; do
    if [[ $w == !* ]]; then
      [[ $got == *" ${w#!} "* ]] && { echo "FAIL: '${words[*]}' offers ${w#!}: $got"; fail=1; }
    else
      [[ $got == *" $w "* ]] || { echo "FAIL: '${words[*]}' does not offer $w: $got"; fail=1; }
    fi
  done
}
expect logctl "" -- tail cat stats send run verify export sites level help
expect logctl ta -- tail '!cat'
expect logctl tail --fo -- --follow
expect logctl cat --cur -- --cursor --cursor-file '!--follow'
expect logctl - -- --unit --since --lines --follow   # journalctl-style, no command
expect logctl cat -p "" -- emerg err warning debug
expect logctl tail -o j -- json json-pretty
expect logctl cat -o short-f -- short-fields
expect logctl send --le -- --level '!--follow'
expect logctl help ex -- export
expect logctl level "" -- debug info off
expect logctl level --app web d -- debug
expect logctl level --app "" -- '!debug'
expect logctl level --re -- --reset '!--follow'
expect logctl level --si -- --site
expect logctl cat --fi -- --field --file
expect logctl - -- --field
expect logctl -F "" -- _PID _UID _GID _COMM _SYSTEMD_UNIT _BOOT_ID _TID
expect logctl cat --field = _B -- _BOOT_ID
expect logctl _P -- _PID= '!_UID='
expect logctl cat "" -- _PID= _SYSTEMD_UNIT= '!tail'
expect logctl tail -n 5 _C -- _COMM=
expect logctl cat _PID = "" -- '!_PID=' '!tail'
expect logctl send "" -- '!_PID='
expect logctl cat --app "" -- '!_PID='
expect logctl cat --output -- --output --output-fields
expect logctl export --output-f -- --output-fields
expect logctl - -- --output-fields
expect logctl cat --output-fields "" -- '!_PID=' '!_PID' '!tail'
expect logctl cat --output-fields = "" -- '!_PID=' '!_PID'
expect logsinkd --sys -- --syslog-socket
expect logsinkd --log-level w -- warn
expect logsink-forward --create -- --create-stream
expect logsink-forward --start "" -- oldest end
[ $fail = 0 ] && echo "bash completion of logctl, logsinkd and logsink-forward OK"
exit $fail
