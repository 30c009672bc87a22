"""Job control through ovni record, as a user at a terminal does it: an
interactive bash in a pseudo-terminal runs `OVNI record -o DIR -- sh -c
'sleep 1; echo slept'`, Ctrl-Z stops the job, fg resumes it; then
Ctrl-Z on a program that catches SIGTSTP, which goes on without stopping;
and Ctrl-Z once the program ended and left a process running. Prints one
word per step that went as it goes without the recorder: stopped,
resumed, status0, caught, left."""
import os
import pty
import select
import sys
import time

ovni, trace = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])


def read_for(seconds, until=None):
    out, end = "", time.time() + seconds
    while time.time() < end and not (until and until in out):
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 4096).decode(errors="replace")
            except OSError:
                break
    return out


read_for(1.0, "# ")
os.write(fd, f"{ovni} record -o {trace} -- sh -c 'sleep 1; echo slept'\n".encode())
time.sleep(0.5)
os.write(fd, b"\x1a")
if "Stopped" in read_for(5.0, "Stopped"):
    print("stopped")
os.write(fd, b"fg\n")
if "slept" in read_for(10.0, "trace in"):
    print("resumed")
os.write(fd, b"echo status$?\n")
if "status0" in read_for(5.0, "status0"):
    print("status0")
# A program that catches SIGTSTP and goes on: the job does not stop.
# (Its words are split so that the terminal's echo of the command holds none.)
catcher = ("import signal, time; signal.signal(signal.SIGTSTP, lambda *a: print('cau' + 'ght', flush=True)); "
           "print('rea' + 'dy', flush=True); time.sleep(1); print('do' + 'ne')")
os.write(fd, f"{ovni} record -o {trace}.catch -- python3 -c \"{catcher}\"\n".encode())
read_for(10.0, "ready")
os.write(fd, b"\x1a")
out = read_for(10.0, "trace in")
if "caught" in out and "done" in out and "Stopped" not in out:
    print("caught")
# Ctrl-Z once the program has ended, while what it left behind runs: the
# job stops, and fg ends it.
os.write(fd, f"{ovni} record -o {trace}.left -- sh -c 'sleep 2 & exit 0'\n".encode())
read_for(10.0, "left behind")
os.write(fd, b"\x1a")
if "Stopped" in read_for(5.0, "Stopped"):
    os.write(fd, b"fg\n")
    if "trace in" in read_for(10.0, "trace in"):
        print("left")
os.write(fd, b"exit\n")
read_for(1.0)
os.waitpid(pid, 0)
