"""The official `openai` Python package against `tooltrail serve`: server-side tools, manual
mode, streaming, and the errors (tool_not_found, a path escape, 401, 413, 429)."""

import threading
import unittest

import openai

from stack import TOKEN, Stack

READ_FILE = {"type": "function", "function": {
    "name": "read_file", "description": "读取文件内容",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
READ_README = {"tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]}
ASK_WEATHER = {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Beijing"}}]}


def client(stack, key=TOKEN):
    return openai.OpenAI(base_url=stack.base_url, api_key=key, max_retries=0)


def tool_results(request):
    return [m["content"] for m in request["body"]["messages"] if m["role"] == "tool"]


class ServerSideTools(unittest.TestCase):
    def test_a_known_tool_runs_on_the_server_and_the_model_sees_its_result(self):
        with Stack([READ_README, {"text": "It is a demo project."}]) as s:
            r = client(s).chat.completions.create(
                model="scripted", messages=[{"role": "user", "content": "What is this?"}],
                tools=[READ_FILE])
            self.assertEqual(r.choices[0].message.content, "It is a demo project.")
            self.assertEqual(r.choices[0].finish_reason, "stop")
            self.assertEqual(r.usage.total_tokens, 30)
            execution = r.model_extra["tool_execution"]
            self.assertEqual((execution["executed"], execution["tools_called"]), (True, ["read_file"]))
            self.assertIn("A demo project.", tool_results(s.requests()[1])[0])

    def test_streaming_gives_content_tool_call_tool_result_and_done(self):
        with Stack([READ_README, {"text": "It is a demo project."}]) as s:
            stream = client(s).chat.completions.create(
                model="scripted", messages=[{"role": "user", "content": "What is this?"}],
                tools=[READ_FILE], stream=True)
            kinds, text, finish = [], "", None
            for chunk in stream:
                kind = chunk.model_extra["type"]
                if not kinds or kinds[-1] != kind:
                    kinds.append(kind)
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    self.assertIsNone(choice.delta.tool_calls)
                    finish = choice.finish_reason or finish
            self.assertEqual(kinds, ["content", "tool_call", "tool_result", "content", "done"])
            self.assertEqual((text, finish), ("It is a demo project.", "stop"))

    def test_a_path_outside_the_workspace_is_refused(self):
        with Stack([{"tool_calls": [{"name": "read_file", "arguments": {"path": "/etc/passwd"}}]},
                    {"text": "I may not read that."}]) as s:
            r = client(s).chat.completions.create(
                model="scripted", messages=[{"role": "user", "content": "Show /etc/passwd"}],
                tools=[READ_FILE])
            self.assertEqual(r.choices[0].message.content, "I may not read that.")
            result = tool_results(s.requests()[1])[0]
            self.assertTrue(result.startswith("error [outside_workspace]"), result)


class ManualMode(unittest.TestCase):
    def round_trip(self, stream):
        with Stack([ASK_WEATHER, {"text": "It is sunny in Beijing."}]) as s:
            c = client(s)
            messages = [{"role": "user", "content": "Weather in Beijing?"}]
            first = c.chat.completions.create(model="scripted", messages=messages,
                                              tools=[WEATHER], stream=stream)
            if stream:
                calls, finish = {}, None
                for chunk in first:
                    for choice in chunk.choices:
                        for call in choice.delta.tool_calls or []:
                            calls[call.index] = call
                        finish = choice.finish_reason or finish
                calls = [calls[i] for i in sorted(calls)]
            else:
                finish, calls = first.choices[0].finish_reason, first.choices[0].message.tool_calls
            self.assertEqual(finish, "tool_calls")
            self.assertEqual([(c_.function.name, c_.function.arguments) for c_ in calls],
                             [("get_weather", '{"city":"Beijing"}')])
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": calls[0].id, "type": "function",
                 "function": {"name": "get_weather", "arguments": calls[0].function.arguments}}]})
            messages.append({"role": "tool", "tool_call_id": calls[0].id, "content": "sunny, 25°C"})
            second = c.chat.completions.create(model="scripted", messages=messages, tools=[WEATHER])
            self.assertEqual(second.choices[0].message.content, "It is sunny in Beijing.")
            self.assertEqual(tool_results(s.requests()[1]), ["sunny, 25°C"])

    def test_round_trip(self):
        self.round_trip(stream=False)

    def test_round_trip_streamed(self):
        self.round_trip(stream=True)


class Errors(unittest.TestCase):
    def test_tool_not_found(self):
        with Stack([]) as s:
            with self.assertRaises(openai.BadRequestError) as raised:
                client(s).chat.completions.create(
                    model="scripted", messages=[{"role": "user", "content": "hi"}], tools=[READ_FILE],
                    tool_choice={"type": "function", "function": {"name": "unknown_tool"}})
            self.assertEqual(raised.exception.code, "tool_not_found")
            self.assertEqual(raised.exception.body["message"], "Tool 'unknown_tool' not found")
            self.assertEqual(raised.exception.body["tool_name"], "unknown_tool")

    def test_a_wrong_token_is_401(self):
        with Stack([]) as s:
            with self.assertRaises(openai.AuthenticationError) as raised:
                client(s, key="wrong").chat.completions.create(
                    model="scripted", messages=[{"role": "user", "content": "hi"}])
            self.assertEqual(raised.exception.code, "invalid_api_key")

    def test_a_body_over_the_limit_is_413(self):
        with Stack([]) as s:
            with self.assertRaises(openai.APIStatusError) as raised:
                client(s).chat.completions.create(
                    model="scripted", messages=[{"role": "user", "content": "x" * (5 * 1024 * 1024)}])
            self.assertEqual((raised.exception.status_code, raised.exception.code),
                             (413, "request_too_large"))

    def test_beyond_max_concurrent_is_429_with_retry_after(self):
        with Stack([{"text": "a slow answer", "delay_ms": 400}], "--max-concurrent", "1") as s:
            slow = threading.Thread(target=lambda: client(s).chat.completions.create(
                model="scripted", messages=[{"role": "user", "content": "slow"}]))
            slow.start()
            import time
            deadline = time.time() + 10
            while not s.requests() and time.time() < deadline:
                time.sleep(0.02)
            with self.assertRaises(openai.RateLimitError) as raised:
                client(s).chat.completions.create(
                    model="scripted", messages=[{"role": "user", "content": "hi"}])
            self.assertEqual(raised.exception.response.headers["retry-after"], "1")
            slow.join()


if __name__ == "__main__":
    unittest.main(verbosity=2)
