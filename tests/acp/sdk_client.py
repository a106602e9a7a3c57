"""An ACP client written on the official Python SDK (PyPI `agent-client-protocol`), driving
`talos acp` over stdio as an editor would. Called by tests/tests/editors/acp.rs against the fake
llama server; every step is asserted here and the script exits non-zero on the first failure.

Environment: TALOS_BIN (the talos binary), TALOS_HOME and TALOS_DAEMON (passed on to it),
WORKSPACE (a directory holding settings.py with TIMEOUT = 30 and RETRIES = 3).
"""

import asyncio
import json
import os
import sys

import acp
from acp import (
    PROTOCOL_VERSION,
    RequestError,
    spawn_agent_process,
    text_block,
    resource_link_block,
)
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    McpServerStdio,
    RequestPermissionResponse,
)

STEP = 30  # seconds any one step may take
WS = os.environ["WORKSPACE"]
SETTINGS = os.path.join(WS, "settings.py")


def settings():
    with open(SETTINGS, encoding="utf-8") as f:
        return f.read()


def check(condition, message):
    if not condition:
        raise AssertionError(message)


class Editor:
    """The client side: records every update and answers permissions as told."""

    def __init__(self):
        self.updates = []
        self.permissions = []
        self.answer = "allow_once"  # or "reject_once", or "cancel"

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        self.permissions.append({"options": [o.option_id for o in options], "tool_call": tool_call})
        if self.answer == "cancel":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)

    async def write_text_file(self, *args, **kwargs):
        raise AssertionError("talos acp must never hand a write to the editor")

    async def read_text_file(self, *args, **kwargs):
        raise AssertionError("talos acp reads through talosd, not the editor")

    def kinds(self):
        return [u.session_update for u in self.updates]

    def text(self, kind="agent_message_chunk"):
        return "".join(u.content.text for u in self.updates if u.session_update == kind)

    def reset(self):
        self.updates.clear()
        self.permissions.clear()


async def step(what, awaitable):
    try:
        return await asyncio.wait_for(awaitable, STEP)
    except asyncio.TimeoutError:
        raise AssertionError(f"{what}: no answer within {STEP} s")


async def main():
    editor = Editor()
    raw = []
    env = dict(os.environ)
    async with spawn_agent_process(
        editor,
        os.environ["TALOS_BIN"],
        "acp",
        env=env,
        observers=[lambda event: raw.append(event.message)],
    ) as (conn, process):
        init = await step(
            "initialize",
            conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="sdk-test", version="1.0"),
            ),
        )
        check(init.protocol_version == 1, f"protocol version {init.protocol_version}")
        check(init.agent_capabilities.load_session is True, "loadSession")
        check(init.agent_capabilities.prompt_capabilities.embedded_context is True, "embedded context")
        check(init.agent_capabilities.prompt_capabilities.image is False, "no images")
        check(not init.auth_methods, "no authentication methods")
        print("initialize: ok")

        new = await step(
            "session/new",
            conn.new_session(
                cwd=WS,
                mcp_servers=[McpServerStdio(name="fs", command="/bin/true", args=[], env=[])],
            ),
        )
        sid = new.session_id
        modes = [m.id for m in new.modes.available_modes]
        check(modes == ["agent", "ask", "plan", "auto", "private"], f"modes {modes}")
        check(new.modes.current_mode_id == "agent", "starts in agent mode")
        meta = json.dumps(new.field_meta or {})
        check('"used": ["mcp.fs.*"]' in meta, f"the editor's MCP server is handed to the session: {meta}")
        print("session/new: ok", sid)

        # A governed edit, approved: diff content in the permission, the file changed.
        editor.answer = "allow_once"
        done = await step(
            "approved edit",
            conn.prompt(session_id=sid, prompt=[text_block("In settings.py, change TIMEOUT from 30 to 60.")]),
        )
        check(done.stop_reason == "end_turn", f"stop reason {done.stop_reason}")
        check("TIMEOUT = 60" in settings(), f"the approved edit was written: {settings()!r}")
        check(len(editor.permissions) == 1, f"one permission asked: {editor.permissions}")
        asked = editor.permissions[0]
        check(asked["options"] == ["allow_once", "allow_always", "reject_once"], f"options {asked['options']}")
        diffs = [c for c in (asked["tool_call"].content or []) if c.type == "diff"]
        check(len(diffs) == 1, f"the permission carries an ACP diff: {asked['tool_call']}")
        check(diffs[0].path == SETTINGS, f"absolute path {diffs[0].path}")
        check(diffs[0].old_text == "TIMEOUT = 30\nRETRIES = 3\n", f"old text {diffs[0].old_text!r}")
        check(diffs[0].new_text == "TIMEOUT = 60\nRETRIES = 3\n", f"new text {diffs[0].new_text!r}")
        kinds = editor.kinds()
        check("plan" in kinds, f"a plan update: {kinds}")
        calls = [u for u in editor.updates if u.session_update == "tool_call"]
        # The read runs at once; the edit waits for the approval, so it is announced pending
        # and turns in_progress only once allowed (ACP's ToolCallStatus, issue 29; a status left
        # out is pending, the default).
        check(
            [(c.kind, c.status or "pending") for c in calls] == [("read", "in_progress"), ("edit", "pending")],
            f"tool calls {[(c.title, c.kind, c.status) for c in calls]}",
        )
        ends = [u.status for u in editor.updates if u.session_update == "tool_call_update"]
        check(ends == ["completed", "in_progress", "completed"], f"tool call updates {ends}")
        check("COMPLETE" in editor.text(), f"the final message: {editor.text()!r}")
        print("approved edit: ok")

        # The same kind of edit, rejected: nothing written.
        editor.reset()
        editor.answer = "reject_once"
        done = await step(
            "rejected edit",
            conn.prompt(session_id=sid, prompt=[text_block("In settings.py, change RETRIES from 3 to 5.")]),
        )
        check("RETRIES = 3" in settings(), f"a rejected edit writes nothing: {settings()!r}")
        check(len(editor.permissions) == 1, "the rejected edit was asked")
        check(done.stop_reason == "end_turn", f"stop reason {done.stop_reason}")
        failed = [u for u in editor.updates if u.session_update == "tool_call_update" and u.status == "failed"]
        check(failed, f"the rejected call is shown failed: {editor.kinds()}")
        check("BLOCKED" in editor.text(), f"the final message says blocked: {editor.text()!r}")
        print("rejected edit: ok")

        # A cancel while the model's stream hangs.
        editor.reset()
        running = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=[text_block("Explain settings.py and wait forever")])
        )
        for _ in range(STEP * 10):
            if "plan" in editor.kinds():
                break
            await asyncio.sleep(0.1)
        check("plan" in editor.kinds(), "the turn started")
        await asyncio.sleep(0.3)
        await conn.cancel(session_id=sid)
        done = await step("cancelled prompt", running)
        check(done.stop_reason == "cancelled", f"stop reason {done.stop_reason}")
        print("cancel: ok")

        # Ask mode: a change is refused and never asked.
        await step("set mode", conn.set_session_mode(session_id=sid, mode_id="ask"))
        editor.reset()
        editor.answer = "allow_once"
        done = await step(
            "edit in ask mode",
            conn.prompt(session_id=sid, prompt=[text_block("In settings.py, change TIMEOUT from 60 to 90.")]),
        )
        check("TIMEOUT = 60" in settings(), f"ask mode changes nothing: {settings()!r}")
        check(not editor.permissions, "ask mode asks for no write")
        check(done.stop_reason in ("refusal", "end_turn"), f"stop reason {done.stop_reason}")
        print("ask mode: ok", done.stop_reason)

        # A resource link inside the workspace is pinned; one outside is named, not read.
        editor.reset()
        await step("set mode back", conn.set_session_mode(session_id=sid, mode_id="agent"))
        done = await step(
            "pinned resource",
            conn.prompt(
                session_id=sid,
                prompt=[
                    text_block("What does this file set?"),
                    resource_link_block(name="settings.py", uri="file://" + SETTINGS),
                    resource_link_block(name="passwd", uri="file:///etc/passwd"),
                ],
            ),
        )
        check("Not pinned: file:///etc/passwd" in editor.text(), f"outside file named: {editor.text()!r}")
        print("resources: ok")

        # Malformed input: each answered with an error, and the bridge stays up.
        for line, code in [
            (b"{not json\n", -32700),
            (b"\xff\xfe not UTF-8\n", -32700),
            (b'{"jsonrpc":"2.0","id":901,"method":7}\n', -32600),
            (b'{"jsonrpc":"2.0","id":902,"method":"session/new","params":{"cwd":"relative"}}\n', -32602),
            (b'{"jsonrpc":"2.0","id":903,"method":"session/prompt","params":{"sessionId":"ses-nope","prompt":[]}}\n', -32002),
            (b'{"jsonrpc":"2.0","id":904,"method":"session/set_mode","params":{"sessionId":"' + sid.encode() + b'","modeId":"yolo"}}\n', -32602),
            (b'{"jsonrpc":"2.0","id":905,"method":"no/such_method","params":{}}\n', -32601),
        ]:
            before = len(raw)
            process.stdin.write(line)
            await process.stdin.drain()
            for _ in range(STEP * 10):
                errors = [m for m in raw[before:] if isinstance(m, dict) and "error" in m]
                if errors:
                    break
                await asyncio.sleep(0.1)
            check(errors and errors[0]["error"]["code"] == code, f"{line!r}: {errors}")
        try:
            await step("unknown extension", conn.ext_method("_talos/nothing", {}))
            raise AssertionError("an unknown method must be an error")
        except RequestError as error:
            check(error.code == -32601, f"method not found: {error.code}")
        again = await step("session/new after bad input", conn.new_session(cwd=WS, mcp_servers=[]))
        check(again.session_id, "the bridge is still up")
        print("malformed input: ok")

    # A second editor process loads the session and sees its history replayed.
    editor2 = Editor()
    async with spawn_agent_process(editor2, os.environ["TALOS_BIN"], "acp", env=env) as (conn2, _):
        await step("initialize 2", conn2.initialize(protocol_version=PROTOCOL_VERSION))
        await step("session/load", conn2.load_session(cwd=WS, session_id=sid, mcp_servers=[]))
        users = editor2.text("user_message_chunk")
        check("change TIMEOUT from 30 to 60" in users, f"history replayed: {users!r}")
        print("session/load: ok")
    print("ACP SDK client: all steps passed")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
