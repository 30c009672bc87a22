# fish completion for ovni and its old tool names.

function __ovni_no_subcommand
    not __fish_seen_subcommand_from (__ovni_subcommands)
end
function __ovni_subcommands
    printf '%s\n' help version sync
end

complete -c ovni -f -n __ovni_no_subcommand -a help -d 'describe a subcommand'
complete -c ovni -f -n __ovni_no_subcommand -a version -d 'show versions of everything inside the binary'
complete -c ovni -n __ovni_no_subcommand -s h -l help -d 'show help'
complete -c ovni -n __ovni_no_subcommand -s V -l version -d 'show the version'

complete -c ovni -f -n __ovni_no_subcommand -a sync -d 'measure clock offsets between nodes (one process per node)'
complete -c ovni -n '__fish_seen_subcommand_from sync' -s o -l output -r -F -d 'write the offsets to FILE'
complete -c ovni -n '__fish_seen_subcommand_from sync' -s n -l samples -x -d 'exchanges per node'
complete -c ovni -n '__fish_seen_subcommand_from sync' -s d -l drift -x -d 'measure ROUNDS times, write a drift table'
complete -c ovni -n '__fish_seen_subcommand_from sync' -s w -l wait -x -d 'seconds between drift rounds'
complete -c ovni -n '__fish_seen_subcommand_from sync' -s v -l verbose -d 'rank 0 prints every sample'
complete -c ovni -n '__fish_seen_subcommand_from sync' -l rank -x -d 'this process rank (with --size)'
complete -c ovni -n '__fish_seen_subcommand_from sync' -l size -x -d 'number of processes'
complete -c ovni -n '__fish_seen_subcommand_from sync' -l bind -x -a '(__fish_print_hostnames)' -d 'address rank 0 listens on'
complete -c ovni -n '__fish_seen_subcommand_from sync' -l timeout -x -d 'bound on every wait, in seconds'
complete -c ovni -n '__fish_seen_subcommand_from sync' -l hostname -x -d 'this node name in the offsets file'
complete -c ovni -n '__fish_seen_subcommand_from sync' -s h -l help -d 'show help'
