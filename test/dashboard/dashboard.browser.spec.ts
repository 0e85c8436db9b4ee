/**
 * The lock page in a real browser (Debian's chromium, driven by
 * playwright-core): locks held by another process show up, a released one
 * disappears on the next refresh, and the app's guard refuses a request
 * without its token. Set SAVE_LOCK_PAGE_SCREENSHOT=1 to refresh
 * docs/lock-page.png.
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  Controller,
  Get,
  Injectable,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ExpressAdapter } from '@nestjs/platform-express';
import { chromium, type Browser } from 'playwright-core';
import { LockModule, LockService } from '../../lib/index.js';
import { LockDashboardModule } from '../../lib/dashboard/index.js';
import { ChildLines } from '../support/child-process.js';
import { compiledScript, repoRoot } from '../support/paths.js';

/** The page's `document`, as the functions run in the browser see it. */
declare const document: {
  querySelectorAll(
    selector: string,
  ): ArrayLike<{ textContent: string | null }> & Iterable<{ textContent: string | null }>;
  querySelector(selector: string): { textContent: string | null } | null;
};

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'let-me-in';

@Injectable()
class TokenGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return req.headers['x-admin-token'] === TOKEN;
  }
}

@Controller('work')
class Work {
  constructor(readonly locks: LockService) {}
  @Get()
  ok() {
    return 'ok';
  }
}

describe('the lock page in Chromium', () => {
  const keyPrefix = `page-${randomBytes(4).toString('hex')}:`;
  let child: ChildProcess;
  let lines: ChildLines;
  let app: INestApplication;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `This test needs Chromium at ${CHROMIUM} (Debian package 'chromium': apt-get install -y chromium; .ci/run installs it).`,
      );
    }
    child = spawn(
      process.execPath,
      [
        compiledScript(new URL('./fixtures/lock-holder.js', import.meta.url)),
        JSON.stringify({ url, keyPrefix, names: ['report:2026-12', 'invoice:7'] }),
      ],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    lines = new ChildLines(child);
    await lines.next('held report:2026-12');
    await lines.next('held invoice:7');

    const ref = await Test.createTestingModule({
      imports: [
        LockModule.forRoot({ redis: url, keyPrefix }),
        LockDashboardModule.register({ path: '/admin/locks', guard: TokenGuard, refreshMs: 300 }),
      ],
      controllers: [Work],
    }).compile();
    app = ref.createNestApplication(new ExpressAdapter());
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    // launch() starts Chromium on a fresh temporary profile of its own (the user-data-dir), removed on close.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    child?.kill();
    await app?.close();
  });

  test('shows the locks another process holds, this process’s own, and events; a released lock disappears', async () => {
    // This process holds one too, and has some history.
    const locks = app.get(Work).locks;
    await locks.withLock('cleanup', () => undefined, { label: 'cleanup' });
    const mine = await locks.acquire('export:users', { label: 'export' });

    const context = await browser.newContext({
      extraHTTPHeaders: { 'x-admin-token': TOKEN },
      viewport: { width: 1100, height: 760 },
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    const response = await page.goto(`${base}/admin/locks`);
    expect(response!.status()).toBe(200);

    const heldNames = () => page.locator('#locks .name').allTextContents();
    await page.waitForFunction(() => document.querySelectorAll('#locks .name').length === 3, undefined, {
      timeout: 10_000,
    });
    expect((await heldNames()).sort()).toEqual(['export:users', 'invoice:7', 'report:2026-12']);
    const mineRow = page.locator('#locks tr', { hasText: 'export:users' });
    await expect(mineRow.textContent()).resolves.toContain('this process');
    await expect(mineRow.textContent()).resolves.toContain(String(mine.fencingToken));
    const theirRow = page.locator('#locks tr', { hasText: 'invoice:7' });
    await expect(theirRow.textContent()).resolves.toContain('worker-2');
    await expect(theirRow.textContent()).resolves.not.toContain('this process');
    // Redis says since when another instance holds its lock, too.
    await expect(theirRow.locator('td').nth(5).textContent()).resolves.toMatch(/^\d.* ago$/);
    await expect(mineRow.locator('td').nth(5).textContent()).resolves.toMatch(/^\d.* ago$/);
    expect(await page.locator('#locks tr .bar > span').count()).toBe(3);
    expect(await page.locator('#store').textContent()).toBe('redis');
    await page.waitForFunction(
      () => (document.querySelector('#recent')?.textContent ?? '').includes('cleanup'),
      undefined,
      { timeout: 5_000 },
    );
    expect(await page.locator('#counts tr', { hasText: 'cleanup' }).textContent()).toMatch(
      /cleanup\s*1\s*1\s*0\s*0\s*0/,
    );

    if (process.env.SAVE_LOCK_PAGE_SCREENSHOT)
      await page.screenshot({ path: join(repoRoot, 'docs/lock-page.png'), fullPage: true });

    // The other process releases one: gone on the next refresh.
    child.stdin!.write('release invoice:7\n');
    await lines.next('released invoice:7');
    await page.waitForFunction(
      () => ![...document.querySelectorAll('#locks .name')].some((e) => e.textContent === 'invoice:7'),
      undefined,
      {
        timeout: 5_000,
      },
    );
    expect((await heldNames()).sort()).toEqual(['export:users', 'report:2026-12']);

    // No owner token and no connection string reach the page.
    const owner = (mine as unknown as { owner: string }).owner;
    const json = await (await context.request.get(`${base}/admin/locks/data`)).text();
    expect(json).not.toContain(owner);
    expect(json).not.toContain('redis://');
    expect(await page.content()).not.toContain(owner);
    expect(errors).toEqual([]);
    await mine.release();
    await context.close();
  });

  test('the guard refuses the page and its JSON without the token', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`${base}/admin/locks`);
    expect(response!.status()).toBe(403);
    expect(await page.content()).not.toContain('report:2026-12');
    const data = await context.request.get(`${base}/admin/locks/data`);
    expect(data.status()).toBe(403);
    expect(await data.text()).not.toContain('report:2026-12');
    await context.close();
  });
});
