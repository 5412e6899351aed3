; Inno Setup 6 script for desktop-kb: installs the PyInstaller folder (dist\desktop-kb) and makes a
; Start-menu shortcut. Built by packaging\build.ps1:
;   ISCC.exe /DAppVersion=0.1.0 /DSourceDir=<repo>\dist\desktop-kb /O<repo>\dist packaging\windows\desktop-kb.iss
; Output: dist\desktop-kb-setup.exe. (Not run on the development machine, which is Linux.)

#define AppName "desktop-kb"
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#ifndef SourceDir
  #define SourceDir "..\..\dist\desktop-kb"
#endif

[Setup]
; A fixed AppId keeps upgrades in place (never change it).
AppId={{5B0E3C0A-6F7C-4C55-9D8B-2A1E8E6D4B71}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=desktop-kb
AppComments=Answers from your own documents, offline, with every claim cited.
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; Per-user install by default (no admin needed); the user may choose all users.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir=..\..\dist
OutputBaseFilename=desktop-kb-setup
SetupIconFile=..\..\resources\icons\desktop-kb.ico
UninstallDisplayIcon={app}\desktop-kb-gui.exe
UninstallDisplayName={#AppName}
WizardStyle=modern
; The 1.1 GB GGUF barely compresses: fast LZMA2 keeps the build quick; not solid so files
; decompress independently. The installer stays below the 2.1 GB single-file limit (no DiskSpanning).
Compression=lzma2/fast
SolidCompression=no
LZMAUseSeparateProcess=yes
CloseApplications=yes
RestartApplications=no

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
; Everything PyInstaller produced, including _internal\models\<default LLM>.gguf (read-only; the
; user's knowledge bases, settings and extra models live in %LOCALAPPDATA%\desktop-kb).
; Never portable mode in an installed copy (Program Files is not writable), never a build's data folder.
Source: "{#SourceDir}\*"; DestDir: "{app}"; Excludes: "\portable.txt,\data"; Flags: ignoreversion recursesubdirs createallsubdirs

[InstallDelete]
; An upgrade replaces the bundle wholesale (stale modules from an older version must not linger).
Type: filesandordirs; Name: "{app}\_internal"

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\desktop-kb-gui.exe"; WorkingDir: "{app}"; Comment: "Answers from your own documents, offline"
Name: "{autoprograms}\{#AppName} command line"; Filename: "{cmd}"; Parameters: "/k desktop-kb.exe --help"; WorkingDir: "{app}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\desktop-kb-gui.exe"; WorkingDir: "{app}"; Tasks: desktopicon

[Run]
Filename: "{app}\desktop-kb-gui.exe"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
Type: filesandordirs; Name: "{app}\_internal"
