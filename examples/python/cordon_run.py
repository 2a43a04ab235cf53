#!/usr/bin/env python3
"""Embeds cordon in Python through its C API (libcordon.so) with ctypes, no CLI involved.

    python3 cordon_run.py [--library PATH] [--config-json TEXT] [WORKSPACE]

Creates a session for WORKSPACE (default: the current directory), asks the policy about a
command it denies, runs `echo hi` in the sandbox and prints the JSON result. Exits non-zero
when anything is not as expected, so the test suite runs it as a test.
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import sys


def load_library(path):
    """libcordon.so from --library, $CORDON_LIBRARY, or the system's search path."""
    name = path or os.environ.get("CORDON_LIBRARY") or ctypes.util.find_library("cordon")
    if not name:
        sys.exit("cordon_run.py: libcordon.so not found (use --library or CORDON_LIBRARY)")
    lib = ctypes.CDLL(name)
    session_p = ctypes.c_void_p  # cordon_session* is opaque: a plain pointer is enough
    out_str = ctypes.POINTER(ctypes.c_void_p)  # char** that we free with cordon_string_free
    lib.cordon_version.restype = ctypes.c_char_p
    lib.cordon_last_error.restype = ctypes.c_char_p
    lib.cordon_session_new.restype = session_p
    lib.cordon_session_new.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_size_t]
    lib.cordon_session_free.argtypes = [session_p]
    lib.cordon_check.argtypes = [session_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                 out_str]
    lib.cordon_run.argtypes = [session_p, ctypes.c_char_p, ctypes.c_void_p, out_str]
    lib.cordon_string_free.argtypes = [ctypes.c_void_p]
    return lib


def take_string(lib, pointer):
    """Copies a string cordon returned and releases cordon's copy."""
    try:
        return ctypes.string_at(pointer.value).decode("utf-8")
    finally:
        lib.cordon_string_free(pointer)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--library")
    parser.add_argument("--config-json", help="config JSON text; default: the user's config file")
    parser.add_argument("workspace", nargs="?", default=os.getcwd())
    args = parser.parse_args()

    lib = load_library(args.library)
    print(f"libcordon {lib.cordon_version().decode()}")

    err = ctypes.create_string_buffer(512)
    config = args.config_json.encode() if args.config_json is not None else None
    session = lib.cordon_session_new(config, args.workspace.encode(), err, len(err))
    if not session:
        sys.exit(f"cordon_run.py: {err.value.decode()}")
    try:
        allowed = ctypes.c_int(1)
        decision = ctypes.c_void_p()
        if lib.cordon_check(session, b"sudo rm -rf /", ctypes.byref(allowed),
                            ctypes.byref(decision)) != 0:
            sys.exit(f"cordon_check: {lib.cordon_last_error().decode()}")
        decision = json.loads(take_string(lib, decision))
        print(f"check 'sudo rm -rf /': {decision['verdict']} ({decision['rule_id']})")
        if allowed.value != 0 or decision["verdict"] != "deny":
            sys.exit("cordon_run.py: sudo was not denied")

        result = ctypes.c_void_p()
        if lib.cordon_run(session, b"echo hi", None, ctypes.byref(result)) != 0:
            sys.exit(f"cordon_run: {lib.cordon_last_error().decode()}")
        result = json.loads(take_string(lib, result))
        print(json.dumps(result, indent=2))
        if result["status"] != "exited" or result["exit_code"] != 0 or result["stdout"] != "hi\n":
            sys.exit("cordon_run.py: `echo hi` did not print hi")
    finally:
        lib.cordon_session_free(session)


if __name__ == "__main__":
    main()
