# fish completion for ovni and its old tool names.

function __ovni_no_subcommand
    not __fish_seen_subcommand_from (__ovni_subcommands)
end
function __ovni_subcommands
    printf '%s\n' help version dump top events emu report export sort sync record pack unpack lib
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
complete -c ovni -n '__fish_seen_subcommand_from dump' -x -l from -d 'only the events from T (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovni -n '__fish_seen_subcommand_from dump' -x -l to -d 'only the events up to T (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovnidump -s x -l hex -d 'print the payload bytes in hex'
complete -c ovnidump -l json -d 'one JSON object per event'
complete -c ovnidump -x -l stream -d 'only the streams whose path matches GLOB'
complete -c ovnidump -x -l mcv -d 'only the events whose MCV matches GLOB'
complete -c ovnidump -x -l from -d 'only the events from T (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovnidump -x -l to -d 'only the events up to T (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovnidump -s h -l help -d 'show the help'

# top (also installed as ovnitop)
complete -c ovni -f -n __ovni_no_subcommand -a top -d 'count the events of a trace by MCV'
complete -c ovni -n '__fish_seen_subcommand_from top' -l procs -d 'one line per process: rank, threads, events, command line'
complete -c ovnitop -l procs -d 'one line per process: rank, threads, events, command line'
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
complete -c ovni -n '__fish_seen_subcommand_from emu' -l salvage -d 'end unfinished streams at their last event (in a copy)'
complete -c ovni -n '__fish_seen_subcommand_from emu' -l from -x -d 'write from T on (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovni -n '__fish_seen_subcommand_from emu' -l to -x -d 'write up to T (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovniemu -s o -r -a '(__fish_complete_directories)' -d 'write the outputs in DIR'
complete -c ovniemu -s c -r -F -d 'clock offsets file'
complete -c ovniemu -s a -d 'enable every model'
complete -c ovniemu -s b -d 'also write the breakdown timelines'
complete -c ovniemu -s l -d 'lint: require empty stacks at the end'
complete -c ovniemu -l sort-mem -x -d 'MiB of unsorted streams sorted in memory'
complete -c ovniemu -l salvage -d 'end unfinished streams at their last event (in a copy)'
complete -c ovniemu -l from -x -d 'write from T on (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovniemu -l to -x -d 'write up to T (1.5s, 200ms, 30us, 12ns, @CLOCK)'
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
complete -c ovni -n '__fish_seen_subcommand_from sort' -x -s j -l jobs -d 'sort N streams at a time'
complete -c ovnisort -s c -d 'only check that every stream is sorted'
complete -c ovnisort -x -s n -d 'look back at most N events from a region\'s end'
complete -c ovnisort -x -s j -l jobs -d 'sort N streams at a time'
complete -c ovnisort -s h -l help -d 'show the help'

# events
complete -c ovni -f -n __ovni_no_subcommand -a events -d 'print the catalogue of events of every model in Markdown'
complete -c ovni -f -n '__fish_seen_subcommand_from events' -a 'nanos6 nodes kernel mpi ovni openmp tampi nosv' -d 'model'

# pack
complete -c ovni -f -n __ovni_no_subcommand -a pack -d 'archive a trace into one compressed file'
complete -c ovni -n '__fish_seen_subcommand_from pack' -r -s o -l output -d 'write the archive to FILE'
complete -c ovni -n '__fish_seen_subcommand_from pack' -x -s l -l level -d 'zstd level (1-22)'
complete -c ovni -n '__fish_seen_subcommand_from pack' -x -s T -l threads -d 'compress on N threads'
complete -c ovni -n '__fish_seen_subcommand_from pack' -l tar -d 'write a plain .tar.zst instead'
complete -c ovni -n '__fish_seen_subcommand_from pack' -l list -d 'list the members of an archive'
complete -c ovni -n '__fish_seen_subcommand_from pack' -l verify -d 'check every block of an archive'

# unpack
complete -c ovni -f -n __ovni_no_subcommand -a unpack -d 'restore a trace directory from an ovni pack archive'
complete -c ovni -n '__fish_seen_subcommand_from unpack' -x -a '(__fish_complete_directories)' -s C -l directory -d 'extract into DIR'
complete -c ovni -n '__fish_seen_subcommand_from unpack' -s f -l force -d 'overwrite existing files'
# report
complete -c ovni -f -n __ovni_no_subcommand -a report -d 'time spent in each state, per thread, CPU, process or task type'
complete -c ovni -n '__fish_seen_subcommand_from report' -s o -r -F -d 'write to FILE'
complete -c ovni -n '__fish_seen_subcommand_from report' -l by -x -a 'thread cpu process task-type' -d 'group the time by'
complete -c ovni -n '__fish_seen_subcommand_from report' -l model -x -a 'ovni kernel nanos6 nosv nodes tampi mpi openmp' -d 'only the channels of a model'
complete -c ovni -n '__fish_seen_subcommand_from report' -l from -x -d 'only the time from T on (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovni -n '__fish_seen_subcommand_from report' -l to -x -d 'only the time up to T (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovni -n '__fish_seen_subcommand_from report' -l csv -d 'comma-separated values'
complete -c ovni -n '__fish_seen_subcommand_from report' -l json -d 'one JSON document'
complete -c ovni -n '__fish_seen_subcommand_from report' -s h -l help -d 'show the help'

# export
complete -c ovni -f -n __ovni_no_subcommand -a export -d 'write a trace as a Chrome/Perfetto timeline (JSON)'
complete -c ovni -n '__fish_seen_subcommand_from export' -l chrome -d 'the Trace Event Format JSON (Perfetto, chrome://tracing)'
complete -c ovni -n '__fish_seen_subcommand_from export' -s o -r -F -d 'write to FILE'
complete -c ovni -n '__fish_seen_subcommand_from export' -l from -x -d 'only the part from T on (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovni -n '__fish_seen_subcommand_from export' -l to -x -d 'only the part up to T (1.5s, 200ms, 30us, 12ns, @CLOCK)'
complete -c ovni -n '__fish_seen_subcommand_from export' -s h -l help -d 'show the help'

# record
complete -c ovni -f -n __ovni_no_subcommand -a record -d 'run a program and record a runtime trace of it'
complete -c ovni -n '__fish_seen_subcommand_from record' -s o -r -a '(__fish_complete_directories)' -d 'where the trace goes'
complete -c ovni -n '__fish_seen_subcommand_from record' -l force -d 'replace the trace the directory holds'
complete -c ovni -n '__fish_seen_subcommand_from record' -l tmpdir -r -a '(__fish_complete_directories)' -d 'write streams under DIR first'
complete -c ovni -n '__fish_seen_subcommand_from record' -l events -x -a 'all ovni nanos6 nosv nodes tampi mpi openmp kernel' -d 'models to record'
complete -c ovni -n '__fish_seen_subcommand_from record' -l loom -x -d 'loom name'
complete -c ovni -n '__fish_seen_subcommand_from record' -l app-id -x -d 'application id'
complete -c ovni -n '__fish_seen_subcommand_from record' -l kernel -d 'record the context switches of every thread'
complete -c ovni -n '__fish_seen_subcommand_from record' -l no-kernel -d 'do not record context switches'
complete -c ovni -n '__fish_seen_subcommand_from record' -s h -l help -d 'show the help'

# lib
complete -c ovni -f -n __ovni_no_subcommand -a lib -d 'write ovni.h and libovni.so to build against the libovni API'
complete -c ovni -n '__fish_seen_subcommand_from lib' -r -a '(__fish_complete_directories)' -d 'directory'
complete -c ovni -n '__fish_seen_subcommand_from lib' -s h -l help -d 'show the help'
