// sim-openai-sdk.mjs — drives `pitwall sim` with the official OpenAI Node SDK; run by
// scripts/sim-openai-sdk.sh, which serves one simulated server per backend and passes
// SIM_URLS="openai=http://... ollama=http://...". Each backend must answer as the real
// server does (edges/sim/dialect.go says what that is and why).
import OpenAI from 'openai';

const urls = Object.fromEntries(
  (process.env.SIM_URLS || '').trim().split(/\s+/).filter(Boolean).map((p) => p.split('=')),
);

// What each backend does with what the SDK sends.
const expect = {
  openai: { retrieve: true, slashRetrieve: true, forced: true, none: true, n: 2, maxCompletion: true },
  ollama: { retrieve: true, slashRetrieve: false, forced: false, none: false, n: 1, maxCompletion: false },
  llamacpp: { retrieve: false, forced: false, none: true, n: 2, nRefused: 3, maxCompletion: true },
  vllm: { retrieve: false, forced: true, none: true, n: 2, maxCompletion: true },
  lmstudio: { retrieve: false, forced: true, none: true, n: 1, maxCompletion: true },
};

let checks = 0;
let failures = 0;
function check(backend, what, ok, detail) {
  checks++;
  if (!ok) {
    failures++;
    console.log(`FAIL ${backend}: ${what}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
  }
}

// statusOf is 200 when p resolves, else the APIError's status.
async function statusOf(p) {
  try {
    await p;
    return 200;
  } catch (e) {
    return e.status ?? String(e);
  }
}

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const time = {
  type: 'function',
  function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } },
};
const askWeather = [
  { role: 'developer', content: 'Use tools when they help.' },
  { role: 'user', content: "What's the weather in Oslo?" },
];
const askRivers = [{ role: 'user', content: 'Tell me about rivers.' }];
const model = 'gpt-4o-mini';

async function checkBackend(backend, url) {
  const want = expect[backend];
  const client = new OpenAI({ apiKey: 'sk-sim', baseURL: url, maxRetries: 0, timeout: 30_000 });

  const list = await client.models.list();
  const ids = list.data.map((m) => m.id);
  check(backend, 'models.list', ids.includes(model) && ids.includes('lmstudio-community/qwen3-8b'), ids);

  for (const id of [model, 'lmstudio-community/qwen3-8b']) {
    const served = want.retrieve && (want.slashRetrieve || !id.includes('/'));
    if (served) {
      const m = await client.models.retrieve(id);
      check(backend, `models.retrieve(${id})`, m.id === id && m.object === 'model' && typeof m.created === 'number' && m.owned_by, m);
    } else {
      check(backend, `models.retrieve(${id}) is the server's 404`, (await statusOf(client.models.retrieve(id))) === 404, 'not 404');
    }
  }
  try {
    await client.models.retrieve('nope:latest');
    check(backend, 'models.retrieve of an unknown model', false, 'succeeded');
  } catch (e) {
    check(backend, 'models.retrieve of an unknown model is a 404', e.status === 404, e.message);
    if (backend === 'openai') {
      check(backend, 'its error code', e.code === 'model_not_found' && e.type === 'invalid_request_error', e.error);
    }
  }

  // The oracle answers with get_weather; the request forces get_time.
  const forced = await client.chat.completions.create({
    model, messages: askWeather, tools: [weather, time], parallel_tool_calls: false, user: 'sdk', logprobs: false,
    tool_choice: { type: 'function', function: { name: 'get_time' } },
  });
  const calls = forced.choices[0].message.tool_calls ?? [];
  const wantName = want.forced ? 'get_time' : 'get_weather';
  check(backend, `a forced get_time is answered with a call of ${wantName}`,
    calls.length === 1 && calls[0].function.name === wantName && forced.choices[0].finish_reason === 'tool_calls',
    forced.choices[0]);

  const none = await client.chat.completions.create({ model, messages: askWeather, tools: [weather, time], tool_choice: 'none' });
  const noneCalls = none.choices[0].message.tool_calls ?? [];
  check(backend, want.none ? 'tool_choice none calls nothing' : 'tool_choice none is ignored',
    want.none ? noneCalls.length === 0 : noneCalls.length === 1, none.choices[0]);

  const nReply = await client.chat.completions.create({ model, messages: askRivers, n: 2 });
  check(backend, `n: 2 gives ${want.n} choice(s)`,
    nReply.choices.length === want.n && nReply.choices.every((c, i) => c.index === i), nReply.choices.length);
  if (want.nRefused) {
    const s = await statusOf(client.chat.completions.create({ model, messages: askRivers, n: want.nRefused }));
    check(backend, `n: ${want.nRefused} over the slots is a 400`, s === 400, s);
  }

  const cut = await client.chat.completions.create({ model, messages: askRivers, max_completion_tokens: 3 });
  const cutTo3 = cut.choices[0].finish_reason === 'length' && cut.usage.completion_tokens === 3;
  check(backend, want.maxCompletion ? 'max_completion_tokens cuts the reply' : 'max_completion_tokens is ignored',
    want.maxCompletion ? cutTo3 : !cutTo3, cut.usage);

  for (const includeUsage of [true, false]) {
    const params = { model, messages: askWeather, tools: [weather], tool_choice: 'required', stream: true };
    if (includeUsage) params.stream_options = { include_usage: true };
    const stream = client.chat.completions.stream(params);
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.finalChatCompletion();
    const call = final.choices[0].message.tool_calls?.[0];
    let args = {};
    try {
      args = JSON.parse(call?.function.arguments ?? '');
    } catch {}
    check(backend, `streamed tool call (include_usage ${includeUsage})`,
      call?.function.name === 'get_weather' && args.city === 'Oslo' && /^(call_|chatcmpl-tool-)/.test(call?.id ?? '') &&
        final.choices[0].finish_reason === 'tool_calls', final.choices[0]);
    const withUsage = chunks.filter((c) => c.usage);
    const last = chunks[chunks.length - 1];
    if (includeUsage) {
      check(backend, 'include_usage: one last chunk with usage and no choices',
        withUsage.length === 1 && last.usage && last.choices.length === 0 &&
          last.usage.total_tokens === last.usage.prompt_tokens + last.usage.completion_tokens, last);
    } else {
      check(backend, 'no usage chunk without include_usage', withUsage.length === 0, withUsage);
    }
  }

  const js = await client.chat.completions.create({
    model, messages: askWeather,
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'weather', strict: true,
        schema: { type: 'object', additionalProperties: false, required: ['city', 'celsius'],
          properties: { city: { type: 'string' }, celsius: { type: 'number' } } },
      },
    },
  });
  let obj = null;
  try {
    obj = JSON.parse(js.choices[0].message.content);
  } catch {}
  check(backend, 'json_schema content has the required fields',
    obj && typeof obj.city === 'string' && typeof obj.celsius === 'number', js.choices[0].message.content);
}

const backends = Object.keys(expect).filter((b) => urls[b]);
if (backends.length === 0) {
  console.error('sim-openai-sdk: SIM_URLS names no backend');
  process.exit(2);
}
for (const b of backends) {
  try {
    await checkBackend(b, urls[b]);
  } catch (e) {
    check(b, 'unexpected error', false, e.stack ?? String(e));
  }
}
console.log(`${checks - failures}/${checks} checks passed against ${backends.join(', ')}`);
process.exit(failures === 0 ? 0 : 1);
