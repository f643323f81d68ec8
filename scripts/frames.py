"""gdb's script for scripts/bench-frames: counts the Convey functions one small GET enters and the
deepest nesting of Convey frames on the thread's stack while it runs.

Every function of the Convey module (symbols starting `$s6Convey`) gets a breakpoint, disabled
until the benchmark calls `convey_frames_begin` and again once it calls `convey_frames_end`. Each
hit records the function (an async function's resume partials, `TQ…_`/`TY…_`, count as the
function itself) and how many Convey frames the stack holds. What it prints is the count of
distinct functions, the count of entries, and the deepest nesting, with the deepest stack.
"""
import re
import subprocess
import gdb

gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set print thread-events off")

binary = gdb.current_progspace().filename
PARTIAL = re.compile(r"(T[QY]\d+_)+$")
names = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout.splitlines()
symbols = sorted({line.split()[-1] for line in names
                  if line.split()[1:2] and line.split()[1].lower() == "t" and line.split()[-1].startswith("$s6Convey")})

entered = {}
entries = 0
deepest = (0, [])
convey = []


def base(name):
    return PARTIAL.sub("", name)


def depth():
    frame = gdb.newest_frame()
    stack = []
    while frame is not None:
        name = frame.name() or ""
        if name.startswith("$s6Convey"):
            stack.append(name)
        frame = frame.older()
    return stack


class Hit(gdb.Breakpoint):
    def stop(self):
        global entries, deepest
        entries += 1
        name = base(self.location.strip("'"))
        entered[name] = entered.get(name, 0) + 1
        stack = depth()
        if len(stack) > deepest[0]:
            deepest = (len(stack), stack)
        return False


class Mark(gdb.Breakpoint):
    def __init__(self, location, on):
        super().__init__(location, internal=True)
        self.on = on

    def stop(self):
        for breakpoint in convey:
            breakpoint.enabled = self.on
        if not self.on:
            demangle = subprocess.run(["swift-demangle", "--simplified"], input="\n".join(sorted(entered)),
                                      capture_output=True, text=True).stdout.splitlines()
            print(f"frames: {len(entered)} functions entered, {entries} entries, deepest nesting {deepest[0]} Convey frames")
            for line in demangle:
                print(f"frames:   {line}")
            print("frames: the deepest stack, innermost first:")
            for line in subprocess.run(["swift-demangle", "--simplified"], input="\n".join(deepest[1]),
                                       capture_output=True, text=True).stdout.splitlines():
                print(f"frames:   {line}")
        return False


for symbol in symbols:
    breakpoint = Hit(f"'{symbol}'", internal=True)
    breakpoint.enabled = False
    convey.append(breakpoint)
Mark("convey_frames_begin", True)
Mark("convey_frames_end", False)
gdb.execute("run")
