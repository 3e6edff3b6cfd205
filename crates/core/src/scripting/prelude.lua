-- The Redis scripting dialect on a stock Lua 5.1 (see scripting/mod.rs and vm.rs).
--
-- Runs once per Lua state, with `prim` (primitives written in Rust) as its
-- argument. `prim.mode` is 'eval' (the state of EVAL scripts) or 'function'
-- (the state of FUNCTION libraries). Returns what Rust needs: the environment
-- scripts are bound to, the table where KEYS and ARGV go, the `redis` table,
-- and the functions that run a script or load a library under Redis's error
-- rules.
--
-- Redis patches its Lua so that the globals table and every table reachable from
-- it are read-only. Stock Lua has no read-only tables, so scripts here see the
-- globals through `env`, an empty proxy whose metatable raises Redis's errors,
-- and every library table through a read-only proxy of its own.

local prim = ...
local MODE = prim.mode
local dbg = debug
local real_error, real_pcall, real_xpcall, real_setfenv = error, pcall, xpcall, setfenv
local real_loadstring = loadstring
local real_rawset, real_setmetatable = rawset, setmetatable
local co_resume = coroutine.resume
local type, tostring, tonumber, select, pairs = type, tostring, tonumber, select, pairs
local floor, concat = math.floor, table.concat
local PRELUDE = '@redislab_prelude'

local READONLY = 'Attempt to modify a readonly table'

-- The functions below that Redis writes in C are wrapped by `prim.c_function`
-- (a Rust function, so a C function to Lua): a `return redis.log(...)` tail call
-- then keeps the script's frame, as it does on Redis. They raise through
-- `prim.raise` (an `{err=...}` table, as Redis's luaPushError + lua_error) or
-- `prim.raise_string` (a plain message, as luaL_error), never through `error`.
local raise, raise_string, c_function = prim.raise, prim.raise_string, prim.c_function
local aborting, error_value = prim.aborting, prim.error_value

-- luaL_where(L, 1) seen from a wrapped function: `level` 1 is the function that
-- calls `where`, then the Rust wrapper, then the script.
local function where(level)
  local info = dbg.getinfo(level + 3, 'Sl')
  if info and info.currentline > 0 then
    return info.short_src .. ':' .. info.currentline .. ': '
  end
  return ''
end
local protected = real_setmetatable({}, { __mode = 'k' })
-- The table behind each read-only view: Redis's read-only tables are the
-- tables themselves, so pairs/next/ipairs/rawget on them see their content.
local target = real_setmetatable({}, { __mode = 'k' })

-- Raised at the assignment's line, as Lua's VM does for a read-only table.
local function readonly_error()
  real_error(READONLY, 2)
end

local function nonexistent(name)
  real_error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 3)
end

-- A read-only view of `t`. `strict`: reading a missing field raises Redis's
-- "nonexistent global" error (luaSetErrorMetatable). getmetatable() on the view
-- answers a read-only view of its metatable, as Redis's protected metatables.
local function readonly(t, strict)
  local mt = { __newindex = readonly_error }
  if strict then
    mt.__index = function(_, k)
      local v = t[k]
      if v == nil then
        nonexistent(k)
      end
      return v
    end
  else
    mt.__index = t
  end
  local mt_view = real_setmetatable({}, { __index = mt, __newindex = readonly_error, __metatable = false })
  protected[mt_view] = true
  mt.__metatable = mt_view
  local proxy = real_setmetatable({}, mt)
  protected[proxy] = true
  target[proxy] = t
  return proxy
end
prim.set_readonly(readonly)

-- An error that must reach the top (a killed script, a load past its time):
-- protected calls re-raise it instead of returning it.
local function check_abort()
  local e = aborting()
  if e then
    raise(e)
  end
end

-- An error value as a script sees it: errors raised by Rust functions arrive as
-- userdata and are turned back into Redis's table or string.
local function script_error(e)
  if type(e) == 'userdata' then
    return error_value(e)
  end
  return e
end

-- ---------------------------------------------------------------------------
-- The `redis` table.

local redis = {}

-- redis.call, redis.pcall and redis.sha1hex are Rust functions (C functions to
-- Lua, as in Redis, so a `return redis.call(...)` tail call keeps the script's
-- frame for the error's line number).
redis.call = prim.call
redis.pcall = prim.pcall
redis.sha1hex = prim.sha1hex
redis.acl_check_cmd = prim.acl_check_cmd

local function error_reply(...)
  local text = ...
  if select('#', ...) ~= 1 or type(text) ~= 'string' then
    return { err = 'ERR wrong number or type of arguments' }
  end
  if text:sub(1, 1) ~= '-' then
    text = '-' .. text
  end
  return { err = prim.error_text(text) }
end

local function status_reply(...)
  local text = ...
  if select('#', ...) ~= 1 or type(text) ~= 'string' then
    return { err = 'ERR wrong number or type of arguments' }
  end
  return { ok = text }
end

-- C's (int) cast of a Lua number, or nil when the value is not a number.
local function c_int(v)
  local n = tonumber(v)
  if n == nil or n ~= n then
    return nil
  end
  if n < 0 then
    return -floor(-n)
  end
  return floor(n)
end

-- Accepted and checked like Redis's; the core has no log file, so the line is
-- dropped.
local function log(...)
  local n = select('#', ...)
  if n < 2 then
    raise('ERR redis.log() requires two arguments or more.')
  end
  local level = c_int((...))
  if level == nil then
    raise('ERR First argument must be a number (log level).')
  end
  if level < 0 or level > 3 then
    raise('ERR Invalid log level.')
  end
end

local function setresp(...)
  if select('#', ...) ~= 1 then
    raise('ERR redis.setresp() requires one argument.')
  end
  local resp = c_int((...)) or 0
  if resp ~= 2 and resp ~= 3 then
    raise('ERR RESP version must be 2 or 3.')
  end
  prim.setresp(resp)
end

-- The core does not replicate; the argument is checked like Redis checks it.
local function set_repl(...)
  if select('#', ...) ~= 1 then
    raise('ERR redis.set_repl() requires one argument.')
  end
  local flags = c_int((...)) or 0
  if flags < 0 or flags > 3 then
    raise('ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.')
  end
end

redis.error_reply = c_function(error_reply)
redis.status_reply = c_function(status_reply)
redis.log = c_function(log)
redis.setresp = c_function(setresp)
redis.set_repl = c_function(set_repl)
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.REDIS_VERSION = prim.version
redis.REDIS_VERSION_NUM = prim.version_num
if MODE == 'eval' then
  -- Only EVAL's state has these (there is no debugger: breakpoint says so).
  redis.replicate_commands = c_function(function() return true end)
  redis.breakpoint = c_function(function() return false end)
  redis.debug = c_function(function() end)
end

-- ---------------------------------------------------------------------------
-- math.random on Redis's own rand48, so the same calls draw the same numbers.

-- The name luaL_argerror gives the wrapped function: how its caller called it
-- (`random` for math.random(...)), or `?` when a C function such as pcall did.
local function fname(level)
  local info = dbg.getinfo(level + 2, 'n')
  return info and info.name or '?'
end

local function argerror(level, i, msg)
  raise_string(where(level + 1) .. 'bad argument #' .. i .. " to '" .. fname(level + 1) .. "' (" .. msg .. ')')
end

-- luaL_checkint, called directly by a wrapped function.
local function int_arg(v, i)
  local n = c_int(v)
  if n == nil then
    local got = v == nil and 'no value' or type(v)
    argerror(2, i, 'number expected, got ' .. got)
  end
  return n
end

local lmath = {}
for k, v in pairs(math) do
  lmath[k] = v
end

function lmath.random(...)
  local r = (prim.lrand48() % 2147483647) / 2147483647
  local n = select('#', ...)
  if n == 0 then
    return r
  elseif n == 1 then
    local u = int_arg((...), 1)
    if u < 1 then
      argerror(1, 1, 'interval is empty')
    end
    return floor(r * u) + 1
  elseif n == 2 then
    local l, u = ...
    l, u = int_arg(l, 1), int_arg(u, 2)
    if l > u then
      argerror(1, 2, 'interval is empty')
    end
    return floor(r * (u - l + 1)) + l
  end
  raise_string(where(1) .. 'wrong number of arguments')
end

function lmath.randomseed(seed)
  prim.srand48(int_arg(seed, 1))
end
lmath.random = c_function(lmath.random)
lmath.randomseed = c_function(lmath.randomseed)

-- ---------------------------------------------------------------------------
-- The globals a script sees.

local visible = {}

-- FUNCTION LOAD runs a library's code with only `redis.register_function`,
-- `redis.log` and the version fields in reach (Redis's LIBRARY_API table).
local loading = false
local library_api = {}
if MODE == 'function' then
  local load_redis = {
    register_function = prim.register_function,
    log = redis.log,
    LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
    REDIS_VERSION = prim.version,
    REDIS_VERSION_NUM = prim.version_num,
  }
  library_api.redis = readonly(load_redis, true)
end

local env_mt = {
  __index = function(_, name)
    local v
    if loading then
      v = library_api[name]
    else
      v = visible[name]
    end
    if v == nil then
      nonexistent(name)
    end
    return v
  end,
  __newindex = readonly_error,
}
local env_mt_view = real_setmetatable({}, { __index = env_mt, __newindex = readonly_error, __metatable = false })
protected[env_mt_view] = true
env_mt.__metatable = env_mt_view
local env = real_setmetatable({}, env_mt)
protected[env] = true
target[env] = visible

local function bind(f)
  real_setfenv(f, env)
  return f
end

-- Redis's pcall hands back the message of an error table, not the table.
local function pcall_result(ok, ...)
  if ok then
    return true, ...
  end
  check_abort()
  local e = script_error((...))
  if type(e) == 'table' then
    local msg = e.err
    if type(msg) == 'string' or type(msg) == 'number' then
      e = msg
    end
  end
  return false, e
end

local function xpcall_result(ok, ...)
  if not ok then
    check_abort()
  end
  return ok, ...
end

local function resume_result(ok, ...)
  if ok then
    return true, ...
  end
  check_abort()
  return false, script_error((...))
end

for _, name in ipairs({
  'assert', 'collectgarbage', 'error', 'gcinfo', 'getmetatable', 'rawequal',
  'select', 'tonumber', 'tostring', 'type', '_VERSION',
}) do
  visible[name] = _G[name]
end
visible._G = env

local real_next, real_ipairs, real_rawget = next, ipairs, rawget
local function seen(t)
  return target[t] or t
end
-- luaL_checktype's error, for a function wrapped by c_function that calls it
-- directly.
local function need_table(...)
  local t = ...
  if type(t) ~= 'table' then
    local got = select('#', ...) == 0 and 'no value' or type(t)
    argerror(2, 1, 'table expected, got ' .. got)
  end
  return seen(t)
end
visible.next = c_function(function(...)
  return real_next(need_table(...), (select(2, ...)))
end)
visible.pairs = c_function(function(...)
  return real_next, need_table(...), nil
end)
visible.ipairs = c_function(function(...)
  return real_ipairs(need_table(...))
end)
visible.rawget = c_function(function(...)
  local t = need_table(...)
  if select('#', ...) < 2 then
    argerror(1, 2, 'value expected')
  end
  return real_rawget(t, (select(2, ...)))
end)

-- Redis's unpack (stock Lua 5.1.5's overflows: see libs/base.rs).
visible.unpack = prim.unpack
visible.pcall = c_function(function(...)
  return pcall_result(real_pcall(...))
end)
visible.xpcall = c_function(function(f, h)
  return xpcall_result(real_xpcall(f, function(e)
    return h(script_error(e))
  end))
end)

-- luaO_chunkid for a chunk named by its source text: `[string "..."]` with
-- the first line (as a C string), cut at 44 bytes with `...`.
local function string_chunkid(src)
  local text = src:match('^[^%z]*')
  local line = text:match('^[^\n\r]*')
  if #line > 44 then
    line = line:sub(1, 44)
  end
  if #line < #text then
    return '[string "' .. line .. '..."]'
  end
  return '[string "' .. line .. '"]'
end

-- Redis's Lua only parses text: a precompiled chunk does not load.
local function text_chunk(s, name)
  if type(s) == 'string' and s:byte(1) == 27 and (name == nil or type(name) == 'string') then
    local id = name and name:sub(1, 1) == '=' and name:sub(2) or string_chunkid(name or s)
    return nil, id .. ":1: unexpected symbol near 'char(27)'"
  end
  local f, e = real_loadstring(s, name)
  if f then
    bind(f)
  end
  return f, e
end
visible.loadstring = function(s, name)
  return text_chunk(s, name)
end
visible.load = function(fn, name)
  local parts = {}
  while true do
    local piece = fn()
    if piece == nil or piece == '' then
      break
    end
    if type(piece) ~= 'string' then
      return nil, 'reader function must return a string'
    end
    parts[#parts + 1] = piece
  end
  return text_chunk(concat(parts), name or '=(load)')
end
-- Redis's VM refuses these on a read-only table with a message and no position.
visible.rawset = c_function(function(t, k, v)
  if protected[t] then
    raise_string(READONLY)
  end
  if type(t) ~= 'table' then
    argerror(1, 1, 'table expected, got ' .. type(t))
  end
  return real_rawset(t, k, v)
end)
visible.setmetatable = c_function(function(t, mt)
  if protected[t] then
    raise_string(READONLY)
  end
  if type(t) ~= 'table' then
    argerror(1, 1, 'table expected, got ' .. type(t))
  end
  return real_setmetatable(t, mt)
end)
local lcoroutine = {}
for k, v in pairs(coroutine) do
  lcoroutine[k] = v
end
lcoroutine.resume = c_function(function(...)
  return resume_result(co_resume(...))
end)

visible.string = readonly(string)
visible.table = readonly(table)
visible.math = readonly(lmath)
visible.coroutine = readonly(lcoroutine)
visible.os = readonly({ clock = os.clock })
visible.cjson = readonly(prim.cjson)
visible.cmsgpack = readonly(prim.cmsgpack)
visible.struct = readonly(prim.struct)
visible.bit = readonly(prim.bit)
visible.redis = readonly(redis)

-- `("x"):rep(2)` goes through the string metatable: hand out a read-only view.
local string_mt = getmetatable('')
string_mt.__metatable = readonly({ __index = visible.string })

-- ---------------------------------------------------------------------------
-- Running a script.

-- Redis's __redis__err__handler: make every error a table {err=...} and note
-- where in the user's script it happened, skipping C functions (as Redis skips
-- the C function that raised) and this prelude's own Lua wrappers (which are C
-- functions in Redis).
local function handler(err)
  local level = 2
  local info = dbg.getinfo(level, 'nSl')
  while info and (info.what == 'C' or info.source == PRELUDE) do
    level = level + 1
    info = dbg.getinfo(level, 'nSl')
  end
  err = script_error(err)
  if type(err) ~= 'table' then
    err = { err = 'ERR ' .. tostring(err) }
  end
  if info then
    err['source'] = info.source
    err['line'] = info.currentline
  end
  return err
end
if MODE == 'eval' then
  visible.__redis__err__handler = handler
end

local run
if MODE == 'eval' then
  run = function(f)
    return real_xpcall(f, handler)
  end
else
  run = function(f, keys, args)
    return real_xpcall(function()
      return f(keys, args)
    end, handler)
  end
end

-- FUNCTION LOAD: runs a library's code with the load API as its globals; an
-- error comes back as Redis's message (a string gets `ERR `).
local function load_library(chunk)
  loading = true
  local ok, e = real_pcall(chunk)
  loading = false
  if ok then
    return true
  end
  e = script_error(e)
  if type(e) == 'table' then
    local msg = e.err
    if type(msg) == 'string' or type(msg) == 'number' then
      return false, tostring(msg)
    end
    return false, 'ERR unknown error'
  end
  return false, 'ERR ' .. tostring(e)
end

-- Redis's luaGC: `lua_gc(LUA_GCSTEP, 50)`, every 50 runs. The collector also
-- works at twice Lua's default speed: the core's runs and loads leave more
-- short-lived objects than Redis's C code, and without this the state's memory
-- (INFO used_memory_lua / used_memory_vm_functions) floats well above Redis's.
local collect = collectgarbage
collect('setstepmul', 400)
local function gc_tick()
  collect('step', 50)
end

return {
  gc_tick = gc_tick,
  env = env,
  visible = visible,
  redis = redis,
  bind = bind,
  run = run,
  load_library = load_library,
}
