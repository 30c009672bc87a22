# fish completion for ovni and its old tool names.

function __ovni_no_subcommand
    not __fish_seen_subcommand_from (__ovni_subcommands)
end
function __ovni_subcommands
    printf '%s\n' help version sort
end

complete -c ovni -f -n __ovni_no_subcommand -a help -d 'describe a subcommand'
complete -c ovni -f -n __ovni_no_subcommand -a version -d 'show versions of everything inside the binary'
complete -c ovni -n __ovni_no_subcommand -s h -l help -d 'show help'
complete -c ovni -n __ovni_no_subcommand -s V -l version -d 'show the version'

# sort (also installed as ovnisort)
complete -c ovni -f -n __ovni_no_subcommand -a sort -d 'sort the unordered regions of a trace\'s streams in place'
complete -c ovni -n '__fish_seen_subcommand_from sort' -s c -d 'only check that every stream is sorted'
complete -c ovni -n '__fish_seen_subcommand_from sort' -x -s n -d 'look back at most N events from a region\'s end'
complete -c ovnisort -s c -d 'only check that every stream is sorted'
complete -c ovnisort -x -s n -d 'look back at most N events from a region\'s end'
complete -c ovnisort -s h -l help -d 'show the help'
