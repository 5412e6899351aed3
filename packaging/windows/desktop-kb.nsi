; NSIS 3 script for desktop-kb-setup.exe, built natively on Linux by packaging/windows/build.sh:
;   makensis -DAPP_VERSION=0.1.0 -DSOURCE_DIR=dist/windows/desktop-kb -DOUT_FILE=dist/windows/desktop-kb-setup.exe \
;            -DICON=resources/icons/desktop-kb.ico packaging/windows/desktop-kb.nsi
; A 64-bit installer (amd64-unicode stub: runs on 64-bit Windows 10/11 and under a 64-bit Wine).
; Per-user, no administrator rights: %LOCALAPPDATA%\Programs\desktop-kb (the folder Windows itself
; uses for per-user programs, named explicitly rather than through FOLDERID_UserProgramFiles, which
; Wine does not know). Silent: desktop-kb-setup.exe /S [/D=C:\path]; uninstall: Uninstall.exe /S.
; The user's data (%LOCALAPPDATA%\desktop-kb: knowledge bases, settings, models they added) is
; never inside the program folder; the uninstaller asks whether to delete it (silent: kept).

Unicode true
Target amd64-unicode
ManifestDPIAware true
RequestExecutionLevel user
SetCompressor zlib

!define APP "desktop-kb"
!define UNINST_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${APP}"
!ifndef APP_VERSION
  !define APP_VERSION "0.0.0"
!endif

Name "${APP}"
OutFile "${OUT_FILE}"
Icon "${ICON}"
UninstallIcon "${ICON}"
InstallDir "$LOCALAPPDATA\Programs\${APP}"
InstallDirRegKey HKCU "${UNINST_KEY}" "InstallLocation"
BrandingText "${APP} ${APP_VERSION}"
ShowInstDetails nevershow
VIProductVersion "${APP_VERSION}.0"
VIAddVersionKey "ProductName" "${APP}"
VIAddVersionKey "ProductVersion" "${APP_VERSION}"
VIAddVersionKey "FileDescription" "${APP} installer: answers from your own documents, offline"
VIAddVersionKey "FileVersion" "${APP_VERSION}"
VIAddVersionKey "LegalCopyright" "desktop-kb authors"

Page directory
Page instfiles
UninstPage uninstConfirm
UninstPage instfiles

Section "desktop-kb"
  SetOutPath "$INSTDIR"
  ; an upgrade replaces the bundle wholesale: no stale module of an older version lingers
  RMDir /r "$INSTDIR\_internal"
  File /r /x "*.gguf" "${SOURCE_DIR}\_internal"
  ; the LLM (GGUF, 4-bit weights) does not compress: stored as it is, the rest zlib
  SetCompress off
  SetOutPath "$INSTDIR\_internal\models"
  File "${SOURCE_DIR}\_internal\models\*.gguf"
  SetCompress auto
  SetOutPath "$INSTDIR"
  File "${SOURCE_DIR}\desktop-kb-gui.exe"
  File "${SOURCE_DIR}\desktop-kb.exe"
  WriteUninstaller "$INSTDIR\Uninstall.exe"
  CreateShortCut "$SMPROGRAMS\${APP}.lnk" "$INSTDIR\desktop-kb-gui.exe" "" "$INSTDIR\desktop-kb-gui.exe" 0 \
    SW_SHOWNORMAL "" "Answers from your own documents, offline"
  CreateShortCut "$SMPROGRAMS\${APP} command line.lnk" "$SYSDIR\cmd.exe" '/k "$INSTDIR\desktop-kb.exe" --help'
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayName" "${APP}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayVersion" "${APP_VERSION}"
  WriteRegStr HKCU "${UNINST_KEY}" "Publisher" "desktop-kb"
  WriteRegStr HKCU "${UNINST_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayIcon" "$INSTDIR\desktop-kb-gui.exe"
  WriteRegStr HKCU "${UNINST_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKCU "${UNINST_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoRepair" 1
SectionEnd

Section "Uninstall"
  Delete "$SMPROGRAMS\${APP}.lnk"
  Delete "$SMPROGRAMS\${APP} command line.lnk"
  RMDir /r "$INSTDIR\_internal"
  Delete "$INSTDIR\desktop-kb-gui.exe"
  Delete "$INSTDIR\desktop-kb.exe"
  Delete "$INSTDIR\Uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINST_KEY}"
  IfFileExists "$LOCALAPPDATA\${APP}\*.*" 0 done
    MessageBox MB_YESNO|MB_ICONQUESTION "Also delete your knowledge bases and settings?$\r$\n($LOCALAPPDATA\${APP})" \
      /SD IDNO IDNO done
    RMDir /r "$LOCALAPPDATA\${APP}"
  done:
SectionEnd
