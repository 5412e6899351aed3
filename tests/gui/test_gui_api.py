"""The app's "Let other apps on this computer ask": the local API inside the app's process, its
tokens made in the app, and the setting turning it off."""

from __future__ import annotations

import dataclasses
import socket

import httpx
import pytest

pytest.importorskip("fastapi")
pytestmark = pytest.mark.gui


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_setting_serves_the_api_from_the_app_and_turns_it_off(qtbot, make_window, make_lib, gui_settings):
    from desktop_kb.gui.local_api import TokenDialog

    port = _free_port()
    on = gui_settings.replace(api=dataclasses.replace(gui_settings.api, enabled=True, port=port))
    win = make_window(make_lib(settings=on))
    assert win.local_api.running and win.local_api.error == ""
    dlg = TokenDialog(on.data_dir, win)
    secret = dlg.create_token("editor plugin")
    assert secret.startswith("dkb_") and dlg.secret.text() == secret and "editor plugin" in dlg.list.item(0).text()
    url = f"http://127.0.0.1:{port}/v1/models"
    r = httpx.get(url, headers={"Authorization": f"Bearer {secret}"})
    assert r.status_code == 200 and r.json()["data"][0]["id"] == "desktop-kb"
    dlg.list.setCurrentRow(0)
    dlg.revoke_selected()
    assert "revoked" in dlg.list.item(0).text()
    assert httpx.get(url, headers={"Authorization": f"Bearer {secret}"}).status_code == 401
    win.local_api.apply(gui_settings, win.lib)  # the setting off
    assert not win.local_api.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=2)


def test_the_settings_dialog_saves_the_api_setting(qtbot, make_window):
    win = make_window()
    dlg = win.open_settings()
    assert not dlg.api_enabled.isChecked()
    dlg.api_enabled.setChecked(True)
    dlg.api_port.setValue(8799)
    new = dlg.build_settings()
    assert new.api.enabled and new.api.port == 8799
