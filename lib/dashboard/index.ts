export { LockDashboardModule } from './lock-dashboard.module.js';
export type { LockDashboardOptions } from './lock-dashboard-options.interface.js';
export type {
  LockDashboardData,
  DashboardLock,
  DashboardCounts,
  DashboardEvent,
} from './lock-dashboard-data.interface.js';
