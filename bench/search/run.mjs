// Search in messages at 1,000,000 messages in one organization, through the gateway, measured with autocannon.
//
//   node bench/search/run.mjs [--duration 15] [--connections 10] [--messages 1000000] [--window 200] [--write] [--keep] [--only <label text>]
//
// Needs: built dist of identity, messaging and gateway (npm run build), PostgreSQL/RabbitMQ/Redis at their
// local defaults (or DATABASE_URL/AMQP_URL/REDIS_URL). Starts the three as separate Node processes on fresh
// databases, signs up an org and a neighbour, seeds conversations and messages with one INSERT ... SELECT each
// (the API path is not what is measured; the messages' indexes are dropped for the load and rebuilt from their
// own definitions after it), then runs one scenario after another. --write replaces the "## search" section of
// bench/RESULTS.md. Databases, queues and Redis keys of the run are removed at the end, also after a failure;
// --keep leaves the seeded messaging database (its URL and the org id are printed) for EXPLAIN (ANALYZE, BUFFERS).
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { benchDbUrl, freePort, identityMessagingEnv, processGroup, root, waitReady, signupOrg } from '../lib/processes.mjs';
import { writeResultsSection } from '../lib/results.mjs';

const require = createRequire(path.join(root, 'package.json'));
const pg = require('pg');
const autocannon = require('autocannon');

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const DURATION = Number(opt('duration', '15'));
const CONNECTIONS = Number(opt('connections', '10'));
const MESSAGES = Number(opt('messages', '1000000'));
const CONVERSATIONS = Math.max(1, Math.round(MESSAGES / 20));
const WRITE = args.includes('--write');
// --only <text>: run only the scenarios whose label contains it (to look again at one; never with --write).
const ONLY = opt('only', '');
const KEEP = args.includes('--keep');
// messaging's MESSAGE_SEARCH_WINDOW for the run (its default unless given).
const WINDOW = Number(opt('window', '200'));

const PG = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AMQP = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const run = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const dbUrl = benchDbUrl(PG, run);
const { launch, stopAll } = processGroup();

// What a Vietnamese sales inbox says, accented as people type it (and sometimes not): each message joins two
// or three of these, so a phrase occurs in 2-6% of the messages, plus a product code (SP<n>, 1 in 5,000).
const PHRASES = [
  'Chào shop',
  'cho em xin báo giá',
  'bao gia di shop',
  'áo thun màu đỏ còn không',
  'giao hàng mất bao lâu',
  'em muốn đặt 2 cái',
  'ship về Hà Nội',
  'ship về Đà Nẵng',
  'giá sỉ bao nhiêu',
  'có size L không',
  'cảm ơn shop',
  'ok em chốt đơn',
  'chuyển khoản rồi nhé',
  'đơn hàng của em tới đâu rồi',
  'hàng bị lỗi',
  'đổi trả thế nào',
  'Dạ shop gửi báo giá ạ',
  'Dạ còn hàng ạ',
  'mã giảm giá',
  'freeship không shop',
  'hello',
  'thanks',
  'Can I get a quote',
  'when will it arrive',
  'bảo hành bao lâu',
  'thanh toán khi nhận hàng',
  'số tài khoản',
  'địa chỉ cửa hàng',
  'giờ mở cửa',
  'em ở Sài Gòn',
  'quần jean nam',
  'váy công sở',
  'giày thể thao',
  'túi xách da',
  'có màu xanh không',
  'hết hàng rồi ạ',
  'để em hỏi lại',
  'anh chị cần tư vấn gì',
  'khuyến mãi tháng này',
  'combo 3 cái giảm 10%',
  'đóng gói cẩn thận giúp em',
  'bên mình có xuất hóa đơn không',
  'Dạ em cảm ơn anh chị đã ủng hộ',
  'lấy 5 cái',
  'ưu đãi khách quen',
  'mai giao được không',
  'đợi em chút',
  'gửi ảnh thật giúp em',
  'chất liệu cotton',
  'đặt cọc trước',
  'tư vấn giúp em với',
  'hàng chính hãng không',
  'cho xem mẫu mới',
  'bảng màu',
  'size chart',
  'phí ship bao nhiêu',
  'nhận hàng rồi ạ',
  'hàng đẹp lắm',
  'không nhận được mã',
  'xin số điện thoại',
  'gọi lại cho em',
  'đang bận chút',
  'tuần sau em lấy',
  'đặt thêm 1 cái nữa',
  'còn mẫu này không',
  'shop ơi',
  'em đã chuyển 500k',
  'hoàn tiền',
  'đổi size giúp em',
  'giao buổi chiều',
  'giao giờ hành chính',
];
const FAMILY = ['Nguyễn', 'Trần', 'Lê', 'Phạm', 'Hoàng', 'Huỳnh', 'Phan', 'Vũ', 'Võ', 'Đặng', 'Bùi', 'Đỗ', 'Hồ', 'Ngô', 'Dương', 'Lý'];
const GIVEN = [
  'An',
  'Bình',
  'Cường',
  'Dũng',
  'Hà',
  'Hải',
  'Hạnh',
  'Hiếu',
  'Hoa',
  'Hùng',
  'Hương',
  'Khánh',
  'Lan',
  'Linh',
  'Long',
  'Mai',
  'Nam',
  'Nga',
  'Phong',
  'Phúc',
  'Quân',
  'Sơn',
  'Tâm',
  'Thảo',
  'Trang',
  'Tuấn',
  'Uyên',
  'Việt',
  'Vy',
  'Yến',
];

/** Conversations and messages of one org, one statement each; ids derived from (org, n) so messages find their conversation. */
async function seed(db, orgId, accountId, conversations, messages, phoneBase) {
  await db.query(
    `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id, contact_chatnet_uid, contact_name, contact_phone,
                                message_count, last_message_at, last_activity_at, created_at)
     SELECT md5($1::text || '/' || n)::uuid, $1::uuid, $2::uuid, 'user', 'uid-' || n, 'uid-' || n,
            ($3::text[])[1 + (n * 7) % array_length($3::text[], 1)] || ' ' || ($4::text[])[1 + (n * 11) % array_length($4::text[], 1)] || ' ' || n,
            '+849' || lpad(($6 + n)::text, 8, '0'), 20, now() - n * interval '1 minute', now(), now() - n * interval '1 minute'
     FROM generate_series(0, $5::int - 1) AS n`,
    [orgId, accountId, FAMILY, GIVEN, conversations, phoneBase],
  );
  await db.query(
    `INSERT INTO messages (id, org_id, conversation_id, chatnet_account_id, direction, content, is_read, source, sent_by_user_id, sent_at)
     SELECT gen_random_uuid(), $1::uuid, md5($1::text || '/' || ((n::bigint * 7919) % $4))::uuid, $2::uuid,
            CASE WHEN n % 2 = 0 THEN 'inbound' ELSE 'outbound' END,
            p[1 + (n * 31) % array_length(p, 1)] || ' ' || p[1 + (n * 17 + 5) % array_length(p, 1)]
              || CASE WHEN n % 3 = 0 THEN ' ' || p[1 + (n * 13 + 11) % array_length(p, 1)] ELSE '' END
              || CASE WHEN n % 4 = 0 THEN ' SP' || (n % 5000) ELSE '' END,
            true, CASE WHEN n % 2 = 0 THEN 'chatnet' ELSE 'ui' END, NULL, now() - n * interval '20 seconds'
     FROM generate_series(1, $3::int) AS n, (SELECT $5::text[] AS p) AS v`,
    [orgId, accountId, messages, conversations, PHRASES],
  );
}

let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true;
});

async function measure(url, token, paths, label) {
  if (interrupted) throw new Error('interrupted');
  if (ONLY && !label.includes(ONLY) && !label.startsWith('baseline')) return undefined;
  const r = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { authorization: `Bearer ${token}` },
    // Each connection walks the list; every path of the mix is exercised many times.
    requests: paths.map((p) => ({ method: 'GET', path: p })),
  });
  const result = {
    label,
    paths: paths.length,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.non2xx + r.errors,
    load: os.loadavg()[0],
  };
  console.log(`${label}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx/errors ${result.errors}`);
  return result;
}

async function main() {
  const ports = { identity: await freePort(), messaging: await freePort(), messagingHttp: await freePort(), gateway: await freePort() };
  const env = await identityMessagingEnv(run, ports, { RATE_LIMIT_USER_PER_MINUTE: '100000000', RATE_LIMIT_PUBLIC_PER_MINUTE: '100000000' });
  const dbs = { identity: dbUrl('identity'), messaging: dbUrl('messaging') };
  try {
    launch('identity', { ...env, DATABASE_URL: dbs.identity, GRPC_PORT: String(ports.identity) });
    launch('messaging', {
      ...env,
      DATABASE_URL: dbs.messaging,
      GRPC_PORT: String(ports.messaging),
      HTTP_PORT: String(ports.messagingHttp),
      ATTACHMENTS_DIR: path.join(os.tmpdir(), `bench_${run}`),
      MESSAGE_SEARCH_WINDOW: String(WINDOW),
    });
    launch('gateway', { ...env, HOST: '127.0.0.1', PORT: String(ports.gateway), SERVICES: 'identity,messaging' });
    const url = `http://127.0.0.1:${ports.gateway}`;
    await waitReady(url);
    const signup = (orgName) => signupOrg(url, run, orgName);
    const big = await signup('Big');
    const other = await signup('Neighbour');
    if (KEEP) console.log(`--keep: messaging database ${dbs.messaging}, org ${big.user.orgId}`);

    const db = new pg.Client({ connectionString: dbs.messaging });
    db.on('error', () => undefined);
    await db.connect();
    const t0 = Date.now();
    // Bulk load without the indexes, then rebuild each from its own definition (so the bench follows the migrations).
    const { rows: indexes } = await db.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'messages' AND indexname <> 'messages_pkey'`,
    );
    for (const i of indexes) await db.query(`DROP INDEX ${i.indexname}`);
    await seed(db, big.user.orgId, '00000000-0000-4000-8000-00000000000a', CONVERSATIONS, MESSAGES, 0);
    // A neighbouring tenant, so the indexes hold more than one organization.
    await seed(
      db,
      other.user.orgId,
      '00000000-0000-4000-8000-00000000000b',
      Math.round(CONVERSATIONS / 10),
      Math.round(MESSAGES / 10),
      CONVERSATIONS + 1,
    );
    const loaded = Date.now();
    await db.query(`SET maintenance_work_mem = '256MB'`);
    for (const i of indexes) await db.query(i.indexdef);
    await db.query('VACUUM ANALYZE messages');
    await db.query('VACUUM ANALYZE conversations');
    // The names were written row by row by the conversations' trigger (migration 036), into the GIN pending lists;
    // a search reads a pending list in full until a vacuum moves it into the index, which autovacuum would do within
    // a minute of the load. Flushed here, as the column's indexes were when they were part of conversations.
    await db.query('VACUUM ANALYZE conversation_names');
    const seedSeconds = { load: (loaded - t0) / 1000, indexes: (Date.now() - loaded) / 1000 };
    console.log(
      `seeded ${MESSAGES} + ${Math.round(MESSAGES / 10)} messages: load ${seedSeconds.load.toFixed(1)} s, indexes ${seedSeconds.indexes.toFixed(1)} s`,
    );
    const { rows: sample } = await db.query('SELECT contact_name, contact_phone FROM conversations WHERE org_id = $1 ORDER BY id LIMIT 40', [
      big.user.orgId,
    ]);
    await db.end();

    const ms = (q) => `/api/v1/messages/search?${new URLSearchParams({ q })}`;
    const cl = (search) => `/api/v1/conversations?${new URLSearchParams({ search })}`;
    // Rare: a product code (about 50 messages each). Phrases (2-6% of the messages each), accented as stored or folded.
    const codes = Array.from({ length: 40 }, (_, i) => `SP${(i * 127) % 5000}`);
    const phrases = [
      'báo giá',
      'bao gia',
      'xuất hóa đơn',
      'xuat hoa don',
      'đơn hàng',
      'Đà Nẵng',
      'da nang',
      'size chart',
      'giam gia',
      'chuyen khoan',
      'bảo hành',
      'giao hang',
    ];
    const combined = ['bao gia SP12', 'don hang SP1270', 'ship SP300', 'hoa don SP77'];
    const names = sample.map((r) => r.contact_name.split(' ').slice(0, 2).join(' '));
    const phones = sample.map((r) => `0${r.contact_phone.slice(3)}`);
    await fetch(`${url}${ms('warm up')}`, { headers: { authorization: `Bearer ${big.token}` } });

    const results = [
      await measure(url, big.token, ['/api/v1/profile'], 'baseline: GET /api/v1/profile (identity, one row)'),
      await measure(url, big.token, codes.map(ms), 'messages/search: product code (~50 matches)'),
      await measure(
        url,
        big.token,
        phrases.map(ms),
        `messages/search: common phrase (20k-60k matches, newest ${WINDOW.toLocaleString('en')} ranked)`,
      ),
      await measure(url, big.token, combined.map(ms), 'messages/search: phrase + code'),
      await measure(
        url,
        big.token,
        phrases.slice(0, 4).map((q) => `${ms(q)}&from=${new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10)}`),
        'messages/search: common phrase, last 7 days',
      ),
      await measure(url, big.token, [...names.map(cl), ...phones.map(cl)], 'conversations?search=: contact name / phone'),
      await measure(url, big.token, [...codes.map(cl), ...phrases.map(cl)], 'conversations?search=: message content (code or phrase)'),
    ];
    if (WRITE && !ONLY) writeResults(results, seedSeconds);
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  } finally {
    await stopAll();
    const admin = new pg.Client({ connectionString: PG });
    await admin.connect();
    for (const u of Object.values(dbs))
      if (!KEEP || u !== dbs.messaging) await admin.query(`DROP DATABASE IF EXISTS "${new URL(u).pathname.slice(1)}" WITH (FORCE)`);
    await admin.end();
    await require('@crm/testing')
      .deleteRabbitPrefix(AMQP, env.EVENTS_EXCHANGE)
      .catch((err) => console.error(`could not delete RabbitMQ topology ${env.EVENTS_EXCHANGE}: ${err.message}`));
    await require('@crm/testing')
      .clearRedisPrefix(env.REDIS_PREFIX)
      .catch((err) => console.error(`could not clear Redis prefix ${env.REDIS_PREFIX}: ${err.message}`));
  }
}

function writeResults(results, seedSeconds) {
  const file = path.join(root, 'bench', 'RESULTS.md');
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const rows = results.map(
    (r) =>
      `| ${r.label} | ${r.paths} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.p99 < 100 ? 'yes' : '**no**'} | ${r.errors} | ${r.load.toFixed(1)} |`,
  );
  const section = [
    '## search',
    '',
    `Search in messages through the gateway (JWT → gateway → gRPC → messaging → PostgreSQL): ${MESSAGES.toLocaleString('en')} messages in`,
    `${CONVERSATIONS.toLocaleString('en')} conversations of one organization, plus a neighbour with a tenth of that. Target: p99 < 100 ms.`,
    `Tool: autocannon (in the bench process), ${CONNECTIONS} connections, ${DURATION} s per scenario, load generator on the same 2-core`,
    "machine as PostgreSQL, Redis, the three Node processes and other engineers' work (the last column shows how busy it was).",
    'Each scenario cycles through its list of request paths. Messages are two or three phrases from a list of 71 (so one phrase is',
    'in 2-6% of them) plus, in one of four, a product code; a common phrase matches 20,000-60,000 messages, of which the newest',
    `MESSAGE_SEARCH_WINDOW (${WINDOW.toLocaleString('en')}) are ranked. Seeding (SQL, not the API): load ${seedSeconds.load.toFixed(0)} s, index builds ${seedSeconds.indexes.toFixed(0)} s.`,
    `Measured ${when} UTC.`,
    '',
    '```',
    `node bench/search/run.mjs --duration ${DURATION} --connections ${CONNECTIONS} --messages ${MESSAGES} --window ${WINDOW} --write`,
    '```',
    '',
    '| scenario | paths | req/s | p50 ms | p99 ms | p99 < 100 ms | non-2xx | machine load (1 min) after |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
  writeResultsSection(file, 'search', section, { keepEarlier: true });
}

main().catch(async (err) => {
  console.error(err);
  await stopAll().catch(() => undefined);
  process.exit(1);
});
