/** Wrong uses of `@Locked`, `@Leader` and `withLock` (LockOptionsError, and the name warning), each with the fix. @internal */

export const suspiciousNameLog = (where: string, name: string, segment: string): string =>
  `${where}: the lock name ${JSON.stringify(name)} has a "${segment}" segment: likely a missing argument or field, ` +
  'so unrelated calls share this lock. Fix the name function (warned once per method).';

export const nameFunctionThrewMessage = (where: string, cause: string): string =>
  `${where}: the lock name function threw: ${cause}. Make it return a string for every argument the method gets.`;

export const missingModuleKey = (className: string, method: string): string =>
  `LockService, for @Locked on ${className}.${method}: import LockModule.forRoot() (or LockModule.forRootAsync()) in the app's root module`;

export const noLockServiceMessage = (where: string): string =>
  `${where}: no LockService on this instance. @Locked methods must belong to a class Nest creates (a provider or controller) ` +
  'in an app that imports LockModule.forRoot() (or forRootAsync()); in plain code, use LockManager.withLock().';

export const notAMethodMessage = (where: string, property: string): string =>
  `${where}: @Locked() decorates methods only; ${property} is not a method. Move it to a method, or use LockService.withLock().`;

export const staticMethodMessage = (where: string): string =>
  `${where}: static methods cannot be locked; Nest injects LockService into instances only. Make it an instance method.`;

export const invalidLockedArgumentsMessage = (got: string, withOptions: boolean): string =>
  `@Locked(): pass a name (string), a name function or an options object, then optional options; got ${got}${withOptions ? ' and options' : ''}.`;

export const notAFunctionMessage = (where: string): string =>
  `${where}: the second argument must be a function: pass the work to run under the lock, e.g. withLock('report', () => build()).`;

export const notAJobMessage = (where: string): string =>
  `${where}: jobDelay needs a BullMQ processor method called as process(job, token) (a job with moveToDelayed() and the worker's token); ` +
  "this call had neither. Use jobDelay on WorkerHost.process() only, or onHeld: 'wait' elsewhere.";

export const jobDelayWithOnHeldMessage = (where: string, onHeld: string): string =>
  `${where}: jobDelay decides what a held lock does to a job (it is moved back to delayed); drop onHeld: '${onHeld}', or drop jobDelay.`;

export const nameFromContextThrewMessage = (where: string, cause: string): string =>
  `${where}: the nameFromContext function threw: ${cause}. Make it return a string for every call, also when it gets no context ` +
  '(a call Nest did not make to this handler: a cron tick, an event listener, a call from another provider or a test).';

export const nameWithNameFromContextMessage = (where: string): string =>
  `${where}: give either name or nameFromContext, not both; nameFromContext gets Nest's ExecutionContext, then the method's arguments.`;

export const inspectUnsupportedMessage = (kind: string): string =>
  `inspect(): the "${kind}" store cannot list its locks. Implement LockProvider.inspect() in the store (every built-in store has it).`;
