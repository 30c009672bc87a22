# fish completion for ovni and its old tool names.

function __ovni_no_subcommand
    not __fish_seen_subcommand_from (__ovni_subcommands)
end
function __ovni_subcommands
    printf '%s\n' help version dump top events emu sort sync
end

complete -c ovni -f -n __ovni_no_subcommand -a help -d 'describe a subcommand'
complete -c ovni -f -n __ovni_no_subcommand -a version -d 'show versions of everything inside the binary'
complete -c ovni -n __ovni_no_subcommand -s h -l help -d 'show help'
complete -c ovni -n __ovni_no_subcommand -s V -l version -d 'show the version'

# dump (also installed as ovnidump)
complete -c ovni -f -n __ovni_no_subcommand -a dump -d 'print the events of a trace in clock order'
complete -c ovni -n '__fish_seen_subcommand_from dump' -s x -l hex -d 'print the payload bytes in hex'
complete -c ovni -n '__fish_seen_subcommand_from dump' -l json -d 'one JSON object per event'
complete -c ovni -n '__fish_seen_subcommand_from dump' -x -l stream -d 'only the streams whose path matches GLOB'
complete -c ovni -n '__fish_seen_subcommand_from dump' -x -l mcv -d 'only the events whose MCV matches GLOB'
complete -c ovni -n '__fish_seen_subcommand_from dump' -x -l from -d 'only the events with a raw clock >= NS'
complete -c ovni -n '__fish_seen_subcommand_from dump' -x -l to -d 'only the events with a raw clock <= NS'
complete -c ovnidump -s x -l hex -d 'print the payload bytes in hex'
complete -c ovnidump -l json -d 'one JSON object per event'
complete -c ovnidump -x -l stream -d 'only the streams whose path matches GLOB'
complete -c ovnidump -x -l mcv -d 'only the events whose MCV matches GLOB'
complete -c ovnidump -x -l from -d 'only the events with a raw clock >= NS'
complete -c ovnidump -x -l to -d 'only the events with a raw clock <= NS'
complete -c ovnidump -s h -l help -d 'show the help'

# top (also installed as ovnitop)
complete -c ovni -f -n __ovni_no_subcommand -a top -d 'count the events of a trace by MCV'
complete -c ovnitop -s h -l help -d 'show the help'

# events
complete -c ovni -f -n __ovni_no_subcommand -a events -d 'print the catalogue of events of every model in Markdown'
complete -c ovni -f -n '__fish_seen_subcommand_from events' -a 'nanos6 nodes kernel mpi ovni openmp tampi nosv' -d 'model'

# emu (also installed as ovniemu)
complete -c ovni -f -n __ovni_no_subcommand -a emu -d 'turn a trace into Paraver timelines'
complete -c ovni -n '__fish_seen_subcommand_from emu' -s o -r -a '(__fish_complete_directories)' -d 'write the outputs in DIR'
complete -c ovni -n '__fish_seen_subcommand_from emu' -s c -r -F -d 'clock offsets file'
complete -c ovni -n '__fish_seen_subcommand_from emu' -s a -d 'enable every model'
complete -c ovni -n '__fish_seen_subcommand_from emu' -s b -d 'also write the breakdown timelines'
complete -c ovni -n '__fish_seen_subcommand_from emu' -s l -d 'lint: require empty stacks at the end'
complete -c ovni -n '__fish_seen_subcommand_from emu' -l sort-mem -x -d 'MiB of unsorted streams sorted in memory'
complete -c ovniemu -s o -r -a '(__fish_complete_directories)' -d 'write the outputs in DIR'
complete -c ovniemu -s c -r -F -d 'clock offsets file'
complete -c ovniemu -s a -d 'enable every model'
complete -c ovniemu -s b -d 'also write the breakdown timelines'
complete -c ovniemu -s l -d 'lint: require empty stacks at the end'
complete -c ovniemu -l sort-mem -x -d 'MiB of unsorted streams sorted in memory'
complete -c ovniemu -s h -l help -d 'show the help'

# sync
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
# sort (also installed as ovnisort)
complete -c ovni -f -n __ovni_no_subcommand -a sort -d 'sort the unordered regions of a trace\'s streams in place'
complete -c ovni -n '__fish_seen_subcommand_from sort' -s c -d 'only check that every stream is sorted'
complete -c ovni -n '__fish_seen_subcommand_from sort' -x -s n -d 'look back at most N events from a region\'s end'
complete -c ovnisort -s c -d 'only check that every stream is sorted'
complete -c ovnisort -x -s n -d 'look back at most N events from a region\'s end'
complete -c ovnisort -s h -l help -d 'show the help'

# events
complete -c ovni -f -n __ovni_no_subcommand -a events -d 'print the catalogue of events of every model in Markdown'
complete -c ovni -f -n '__fish_seen_subcommand_from events' -a 'nanos6 nodes kernel mpi ovni openmp tampi nosv' -d 'model'
