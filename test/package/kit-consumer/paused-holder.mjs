// The other process of the kit's paused-holder cases, as a store author writes it: it opens the store and hands it to
// runPausedHolder with the argument the suite passed. The in-memory store is the child's own (sharesStore: false).
import { InMemoryLockProvider } from 'nest-lock';
import { runPausedHolder } from 'nest-lock/testing';

await runPausedHolder(new InMemoryLockProvider(), process.argv[2]);
