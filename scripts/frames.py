"""gdb's script for scripts/bench-frames: counts the Convey functions one small GET enters and the
deepest nesting of Convey frames on the thread's stack while it runs.

Every function of the Convey module (symbols starting `$s6Convey`) gets a breakpoint when the
benchmark calls `convey_frames_begin`, after its warm-up, disabled again once it calls `convey_frames_end`. Each
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
# Each function's address in the file, by name: breakpoints go on addresses (the load base added
# once the program runs), which gdb sets at once, where a name is looked up in the debug info.
symbols = {}
for line in names:
    fields = line.split()
    if len(fields) == 3 and fields[1].lower() == "t" and (fields[2].startswith("$s6Convey") or fields[2] == "convey_frames_begin"):
        symbols[fields[2]] = int(fields[0], 16)
by_address = {}

entered = {}
entries = 0
deepest = (0, [])
convey = []


# What the compiler makes besides the functions written in the source: value witnesses, outlined
# copies, metadata accessors, protocol witness and reabstraction thunks, partial applications.
HELPER = re.compile(r"^(outlined |type metadata |getEnumTag|storeEnumTag|initializeWith|assignWith|destroy for|"
                    r"initializeBufferWithCopy|protocol witness|partial apply|reabstraction thunk|thunk for|"
                    r"merged |key path |associated type |value witness|lazy protocol witness|base witness|"
                    r"\S+ in conformance)")


def demangled(name):
    return subprocess.run(["swift-demangle", "--simplified", name], capture_output=True, text=True).stdout.strip()


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
        name = base(by_address[self.location])
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
        if self.on and not convey:
            loaded = int(gdb.parse_and_eval("(long)&convey_frames_begin"))
            offset = loaded - symbols["convey_frames_begin"]
            for symbol, address in symbols.items():
                if symbol.startswith("$s6Convey"):
                    location = f"*{hex(address + offset)}"
                    by_address[location] = symbol
                    convey.append(Hit(location, internal=True))
        for breakpoint in convey:
            breakpoint.enabled = self.on
        if not self.on:
            demangle = subprocess.run(["swift-demangle", "--simplified"], input="\n".join(sorted(entered)),
                                      capture_output=True, text=True).stdout.splitlines()
            written = [line for line in demangle if not HELPER.match(line)]
            source_depth = len([name for name in deepest[1] if not HELPER.match(demangled(name))])
            print(f"frames: {len(written)} functions of the source entered ({len(entered)} with the compiler's helpers), "
                  f"{entries} entries, deepest nesting {deepest[0]} Convey frames ({source_depth} of the source)")
            for line in written:
                print(f"frames:   {line}")
            print("frames: the deepest stack, innermost first:")
            for line in subprocess.run(["swift-demangle", "--simplified"], input="\n".join(deepest[1]),
                                       capture_output=True, text=True).stdout.splitlines():
                print(f"frames:   {line}")
        return False


Mark("*convey_frames_begin", True)
Mark("*convey_frames_end", False)
gdb.execute("run")
