#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the portable wheel's extension takes from the system, checked before it is tagged.

scripts/build-wheel compiles the extension against this machine's glibc headers and links
it against glibc 2.28's stubs. Two ways that can go wrong, which auditwheel does not see:

- a symbol left undefined without a version (one that glibc 2.28 lacks and nothing in the
  extension defines): it would bind to whatever the process has, or fail to load. Only the
  interpreter's own (Py*, _Py*) and weak references may be.
- a symbol bound to an older version than the one this machine's headers were written for,
  in the same library: glibc gives a function a new version when it changes its arguments
  or meaning (2.31's totalorder took pointers instead of values), so the call compiled here
  may not fit what it binds to. Accepted where the versions differ only because the function
  moved between glibc's libraries (libpthread, libdl and librt into libc in 2.32 and 2.34,
  clock_gettime in 2.17), and for libm's functions whose new versions only dropped the SVID
  error handling (the same arguments and results; SAME_ABI below).

Prints what it found; exits 1 naming each offending symbol. Needs pyelftools (the wheel
tools' virtualenv has it, for auditwheel).
Usage: wheel_symbols.py EXTENSION
"""
import re
import subprocess
import sys

from elftools.elf.elffile import ELFFile

# libm functions whose versions after 2.26 exist only to leave out the SVID error wrapper.
SAME_ABI = {"expf", "exp2f", "logf", "log2f", "powf", "exp", "exp2", "log", "log2", "pow", "exp10f",
            "hypot", "hypotf", "fmod", "fmodf"}
GLIBC_LIBRARIES = ["libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
                   "libresolv.so.2", "ld-linux-x86-64.so.2"]


def version_key(version):
    return tuple(int(part) for part in re.findall(r"\d+", version))


def imports(path):
    """{name: (version or None, library or None, weak)} of the undefined dynamic symbols."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        needs = {}
        verneed = elf.get_section_by_name(".gnu.version_r")
        if verneed is not None:
            for need, auxes in verneed.iter_versions():
                for aux in auxes:
                    needs[aux["vna_other"]] = (aux.name, need.name)
        versym = elf.get_section_by_name(".gnu.version")
        found = {}
        for index, sym in enumerate(elf.get_section_by_name(".dynsym").iter_symbols()):
            if not sym.name or sym["st_shndx"] != "SHN_UNDEF":
                continue
            ndx = versym.get_symbol(index)["ndx"] if versym is not None else 0
            version, library = needs.get(ndx & 0x7FFF, (None, None)) if isinstance(ndx, int) else (None, None)
            found[sym.name] = (version, library, sym["st_info"]["bind"] == "STB_WEAK")
        return found


def defaults(path):
    """{name: default version} of a library's defined dynamic symbols."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        names = {}
        for verdef, auxes in elf.get_section_by_name(".gnu.version_d").iter_versions():
            names[verdef["vd_ndx"]] = next(iter(auxes)).name
        versym = elf.get_section_by_name(".gnu.version")
        found = {}
        for index, sym in enumerate(elf.get_section_by_name(".dynsym").iter_symbols()):
            if not sym.name or sym["st_shndx"] == "SHN_UNDEF":
                continue
            ndx = versym.get_symbol(index)["ndx"]  # bit 15: a hidden (non-default) version
            if isinstance(ndx, int) and not ndx & 0x8000 and ndx in names:
                found[sym.name] = names[ndx]
        return found


def system_glibc():
    """{name: (default version, library)} of this machine's glibc."""
    found = {}
    for library in GLIBC_LIBRARIES:
        path = subprocess.run(["gcc", f"-print-file-name={library}"], capture_output=True, text=True,
                              check=True).stdout.strip()
        if path == library:  # gcc did not find it
            continue
        for name, version in defaults(path).items():
            found.setdefault(name, (version, library))
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    taken = imports(sys.argv[1])
    here = system_glibc()
    problems, moved, wrappers = [], [], []
    glibc = {name: entry for name, entry in taken.items() if entry[0] and entry[0].startswith("GLIBC_")}
    for name, (version, library, weak) in sorted(taken.items()):
        if version is None and not weak and not re.match(r"_?Py", name):
            problems.append(f"{name}: undefined without a version (not in glibc 2.28, nor defined in the extension)")
    for name, (version, library, _) in sorted(glibc.items()):
        if name not in here or here[name][0] == version:
            continue
        default, home = here[name]
        if home != library:
            moved.append(name)
        elif name in SAME_ABI:
            wrappers.append(name)
        else:
            problems.append(f"{name}: bound to {name}@{version} of {library}, but this machine's headers mean "
                            f"{name}@{default}, which glibc introduced for a change of arguments or meaning; "
                            "if its NEWS says the function is the same, add it to SAME_ABI in scripts/wheel_symbols.py")
    newest = max((entry[0] for entry in glibc.values()), key=version_key, default="none")
    print(f"wheel-symbols: {len(glibc)} glibc symbols, the newest version {newest}; bound to an older version "
          f"than this machine's headers mean: {len(moved)} moved between glibc's libraries"
          f"{' (' + ', '.join(moved[:4]) + ', ...)' if moved else ''}, {len(wrappers)} libm functions without "
          f"the SVID wrapper{' (' + ', '.join(wrappers) + ')' if wrappers else ''}")
    for problem in problems:
        print(f"wheel-symbols: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
