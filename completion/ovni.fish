# fish completion for ovni and its old tool names.

function __ovni_no_subcommand
    not __fish_seen_subcommand_from (__ovni_subcommands)
end
function __ovni_subcommands
    printf '%s\n' help version events
end

complete -c ovni -f -n __ovni_no_subcommand -a help -d 'describe a subcommand'
complete -c ovni -f -n __ovni_no_subcommand -a version -d 'show versions of everything inside the binary'
complete -c ovni -n __ovni_no_subcommand -s h -l help -d 'show help'
complete -c ovni -n __ovni_no_subcommand -s V -l version -d 'show the version'

# events
complete -c ovni -f -n __ovni_no_subcommand -a events -d 'print the catalogue of events of every model in Markdown'
complete -c ovni -f -n '__fish_seen_subcommand_from events' -a 'nanos6 nodes kernel mpi ovni openmp tampi nosv' -d 'model'
