# The code_exec harness: evalctl sends this program, after two assignments naming the code under
# test (__evalctl_code) and one target (__evalctl_target), to `python3 -I -S -` in the sandbox
# (the standard library only: no site-packages, whose native modules could reach any memory).
#
# Before the code runs, the harness reads a one-time token from file descriptor 4 and closes it,
# keeps the builtins it needs (and a copy of them all), and installs an audit hook (which nothing
# can remove) that refuses what would reach the harness's frame or memory: frame lookups
# (sys._getframe, a traceback's or generator's frame), the garbage collector's object lists,
# tracing and profiling, signal handlers (they receive frames), ctypes, new code objects
# (bytecode built by hand can read memory), subinterpreters and programs run anew (which the
# hook does not watch), a refused module under any name it is loaded as. The code and the target
# stop being globals of this program. A process the code forks ends, whatever an expression
# target's verdict, before it could tell it. The code then runs in a fresh namespace; the target,
# in a plain copy of it whose builtins are those from before the code ran (and with nothing this
# program looks up after the code ran left for the code to rebind), is asserted when it parses
# as an expression, else run as statements; only then is the token written to file descriptor 3,
# which evalctl reads. Code that exits early, patches builtins or rewrites this program writes
# no token.


def __evalctl_run(code, target):
    import builtins
    import os
    import sys
    import types  # noqa: F401 (it looks at a traceback's frame once, when first imported)

    compile_, exec_, eval_ = builtins.compile, builtins.exec, builtins.eval
    # Every name used after the code runs is a local taken now: the code can rebind a global of
    # this module (`sys.modules["__main__"].dict = ...`), which a later lookup would find.
    dict_, type_, str_, assertion_error = builtins.dict, builtins.type, builtins.str, AssertionError
    read, write, close, getpid, exit_now = os.read, os.write, os.close, os.getpid, os._exit
    # A process the code forks runs this program on too: it must not learn the target's verdict
    # (forked guesses would find the answer), so it ends the same way whatever the verdict.
    harness_pid, forked = getpid(), 70
    # The code and the target are this program's globals until now: the code must not read the
    # target (nor run this function again).
    main = sys.modules["__main__"].__dict__
    for name in ("__evalctl_code", "__evalctl_target", "__evalctl_run"):
        main.pop(name, None)
    token = b""
    while True:
        chunk = read(4, 256)
        if not chunk:
            break
        token += chunk
    close(4)
    try:
        check = compile_(target, "<target>", "eval")
        expression = True
    except SyntaxError:
        check = compile_(target, "<target>", "exec")
        expression = False
    program = compile_(code, "<code>", "exec")
    pristine = dict(builtins.__dict__)

    refused = frozenset(
        (
            "sys._current_frames",
            "sys._current_exceptions",
            "sys.settrace",
            "sys.setprofile",
            "gc.get_objects",
            "gc.get_referrers",
            "gc.get_referents",
            "code.__new__",
            "cpython.PyInterpreterState_New",
            # A program run anew has no audit hook.
            "os.exec",
            "os.posix_spawn",
            "os.spawn",
            "os.system",
        )
    )
    frames = frozenset(("sys._getframe", "sys._getframemodulename"))
    modules = frozenset(
        (
            "signal",
            "_signal",
            "ctypes",
            "_ctypes",
            "_testcapi",
            "_testinternalcapi",
            "_xxsubinterpreters",
            "_interpreters",
            "_xxinterpchannels",
            "_interpchannels",
            "_interpqueues",
        )
    )
    # (A function's defaults may be set, as namedtuple and dataclasses do: the hook's own, which
    # hold what it refuses, are out of the code's reach, as the hook is.)
    attributes = frozenset(("__code__", "__globals__", "__closure__"))
    frame_links = frozenset(("tb_frame", "gi_frame", "cr_frame", "ag_frame"))

    def audit(
        event,
        args,
        refused=refused,
        frames=frames,
        modules=modules,
        frame_links=frame_links,
        attributes=attributes,
        runtime_error=RuntimeError,
        value_error=ValueError,
        attribute_error=AttributeError,
        import_error=ImportError,
        type_=type_,
        str_=str_,
    ):
        if event in refused or event.startswith("ctypes.") or event.startswith("sys.monitoring"):
            raise runtime_error("evalctl code_exec: " + event + " is not available")
        # ValueError and AttributeError are what the standard library expects from lookups that
        # find nothing (namedtuple and typing ask for their caller's frame), so it carries on.
        if event in frames:
            raise value_error("evalctl code_exec: " + event + " is not available")
        if event == "object.__getattr__" and args[1] in frame_links:
            raise attribute_error("evalctl code_exec: " + args[1] + " is not available")
        # A module is known by its last name and its file, whatever name it is loaded under.
        if event == "import":
            name = args[0].rpartition(".")[2] if type_(args[0]) is str_ else ""
            path = args[1] if type_(args[1]) is str_ else ""
            if name in modules or path.rpartition("/")[2].partition(".")[0] in modules:
                raise import_error("evalctl code_exec: module " + args[0] + " is not available")
        if event == "object.__setattr__" and args[1] in attributes:
            raise runtime_error("evalctl code_exec: setting " + args[1] + " is not available")

    sys.modules.pop("_signal", None)
    sys.modules.pop("signal", None)
    sys.addaudithook(audit)
    scope = {"__name__": "__main__", "__builtins__": builtins}
    exec_(program, scope)
    if getpid() != harness_pid:
        exit_now(forked)
    # The target sees what the code defined, in a plain dict with plain string keys (a key of
    # the code's own type could run its code on every lookup), and the builtins as they were
    # before it ran.
    checked = dict_()
    for name, value in dict_.items(scope):
        if type_(name) is str_:
            checked[name] = value
    checked["__builtins__"] = pristine
    try:
        if expression:
            passed = not not eval_(check, checked)
        else:
            exec_(check, checked)
            passed = True
    finally:
        if getpid() != harness_pid:
            exit_now(forked)
    if not passed:
        raise assertion_error
    write(3, token)


__evalctl_run(__evalctl_code, __evalctl_target)
