# logsink.bash: bash completion for logctl, logsinkd and logsink-forward,
# installed as /usr/share/bash-completion/completions/{logctl,logsinkd,
# logsink-forward} (the same file under three names; bash-completion loads it
# on the first Tab after one of them).
#
# The options come from each program's own --help (cached per shell), so
# they never drift from what the program accepts; values are completed where
# they form a small fixed set (levels, output modes, commands) or are files.

_logsink_help_opts() { # program [command]: the long options its help lists
  local key="${1}_${2:-}" cache
  key=${key//[^A-Za-z0-9_]/_}
  cache="_logsink_opts_$key"
  if [[ -z ${!cache-} ]]; then
    local text
    if [[ -n ${2-} ]]; then text=$("$1" "$2" --help 2>/dev/null); else text=$("$1" --help 2>/dev/null); fi
    printf -v "$cache" '%s' "$(grep -oE -- '--[a-z][a-z-]*' <<<"$text" | sort -u | tr '\n' ' ')"
  fi
  printf '%s' "${!cache}"
}

_logsink_levels="emerg alert crit err warning notice info debug"

_logsink_trusted_fields() { # the trusted fields (_PID, ...) logctl's help lists
  if [[ -z ${_logsink_trusted-} ]]; then
    _logsink_trusted=$(logctl cat --help 2>/dev/null | grep -oE -- '(^|[ (])_[A-Z][A-Z_]*' |
      tr -d ' (' | sort -u | tr '\n' ' ')
  fi
  printf '%s' "$_logsink_trusted"
}

_logctl() {
  local cur prev cmd="" i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  local commands="tail cat stats send run verify export sites level help"
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --) [[ $cmd == run ]] && { compopt -o default 2>/dev/null; COMPREPLY=(); return; } ;;
      -*) ;;
      *) if [[ -z $cmd && " $commands " == *" ${COMP_WORDS[i]} "* ]]; then cmd=${COMP_WORDS[i]}; fi ;;
    esac
  done
  # FIELD=VALUE is three words to bash ('=' breaks words): a value after
  # '=' is free text, but --field=FIELD names a field.
  if [[ $prev == = ]]; then
    case ${COMP_WORDS[COMP_CWORD - 2]} in
      --field) mapfile -t COMPREPLY < <(compgen -W "$(_logsink_trusted_fields)" -- "$cur") ;;
    esac
    return
  fi
  case $prev in
    -F | --field)
      mapfile -t COMPREPLY < <(compgen -W "$(_logsink_trusted_fields)" -- "$cur")
      return ;;
    --output-fields) return ;;  # the program's own field names: free text
    --file | --cursor-file | --socket | --config)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return ;;
    -o | --output)
      if [[ $cmd == export ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -W "short short-iso short-precise short-unix short-monotonic short-fields cat verbose json json-pretty raw" -- "$cur")
      fi
      return ;;
    -p | --level | --priority | --level-stdout | --level-stderr)
      mapfile -t COMPREPLY < <(compgen -W "$_logsink_levels" -- "$cur")
      return ;;
    --format)
      mapfile -t COMPREPLY < <(compgen -W "text json" -- "$cur")
      return ;;
    -b | --boot)
      mapfile -t COMPREPLY < <(compgen -W "0 -1 all" -- "$cur")
      return ;;
  esac
  if [[ $cmd == help ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    return
  fi
  # The reading commands' words are FIELD=VALUE matches: the trusted
  # fields' names are known (a '_' first, or any word after a command).
  if [[ $cur != -* && ( $cur == _* || $cmd == tail || $cmd == cat || $cmd == export ||
        $cmd == sites ) ]]; then
    case $prev in  # the value of an option: free text
      -n | --lines | --pid | --uid | --app | -t | --tag | -u | --unit | -S | --since | -U | \
        --until | -g | --grep | --after-cursor | --cursor) return ;;
    esac
    local f names=()
    for f in $(_logsink_trusted_fields); do names+=("$f="); done
    mapfile -t COMPREPLY < <(compgen -W "${names[*]}" -- "$cur")
    compopt -o nospace 2>/dev/null
    return
  fi
  if [[ -z $cmd && $cur != -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    return
  fi
  # level's one word is the LEVEL to set (after an option that takes a
  # value, the value was completed above or is free text).
  if [[ $cmd == level && $cur != -* ]]; then
    case $prev in
      --app | --pid | --unit | -u | --uid | --site) return ;;
    esac
    mapfile -t COMPREPLY < <(compgen -W "$_logsink_levels off" -- "$cur")
    return
  fi
  if [[ $cur == -* ]]; then
    # Without a command the options are cat's and tail's (logctl -f, -n).
    local opts
    if [[ -z $cmd ]]; then
      opts="$(_logsink_help_opts logctl cat) $(_logsink_help_opts logctl tail)"
    else
      opts=$(_logsink_help_opts logctl "$cmd")
    fi
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
  fi
}

_logsinkd() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  case $prev in
    --config | --socket | --syslog-socket | --file)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return ;;
    --log-level)
      mapfile -t COMPREPLY < <(compgen -W "trace debug info warn error critical off" -- "$cur")
      return ;;
  esac
  [[ $cur == -* ]] && mapfile -t COMPREPLY < <(compgen -W "$(_logsink_help_opts logsinkd)" -- "$cur")
}

_logsink_forward() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  case $prev in
    --config | --file | --cursor-file)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return ;;
    --level)
      mapfile -t COMPREPLY < <(compgen -W "$_logsink_levels" -- "$cur")
      return ;;
    --log-level)
      mapfile -t COMPREPLY < <(compgen -W "trace debug info warn error critical off" -- "$cur")
      return ;;
    --to)
      mapfile -t COMPREPLY < <(compgen -W "nats:// relp://" -- "$cur")
      compopt -o nospace 2>/dev/null
      return ;;
    --start)
      mapfile -t COMPREPLY < <(compgen -W "oldest end" -- "$cur")
      return ;;
  esac
  [[ $cur == -* ]] && mapfile -t COMPREPLY < <(compgen -W "$(_logsink_help_opts logsink-forward)" -- "$cur")
}

complete -F _logctl logctl
complete -F _logsinkd logsinkd
complete -F _logsink_forward logsink-forward
