import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { LockOptionsError } from '../errors/lock.errors.js';
import { scopedLeaderMessage } from '../errors/lock.messages.js';
import { LEADER_METADATA, type LeaderMetadata } from '../leader/leader.decorator.js';
import { LeaderService } from './leader.service.js';

/**
 * Finds every `@Leader` method of the app's providers and controllers at
 * application bootstrap and starts its campaign (without waiting for the
 * method: it runs as long as its replica leads). @internal
 */
@Injectable()
export class LeaderExplorer implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly leaders: LeaderService,
  ) {}

  onApplicationBootstrap(): void {
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const prototype = (wrapper.metatype as { prototype?: object } | undefined)?.prototype;
      const instance = wrapper.isDependencyTreeStatic()
        ? (wrapper.instance as Record<string, unknown> | undefined)
        : undefined;
      const source = instance && typeof instance === 'object' ? Object.getPrototypeOf(instance) : prototype;
      if (!source || typeof source !== 'object') continue;
      for (const method of this.scanner.getAllMethodNames(source)) {
        const fn = (source as Record<string, unknown>)[method];
        const meta =
          typeof fn === 'function'
            ? (Reflect.getMetadata(LEADER_METADATA, fn) as LeaderMetadata | undefined)
            : undefined;
        if (!meta) continue;
        if (!instance || typeof instance !== 'object') {
          throw new LockOptionsError(scopedLeaderMessage(meta.name, String(wrapper.name), method));
        }
        const bound = instance[method] as (...args: unknown[]) => unknown;
        this.leaders.campaign(meta.name, { ...meta.options, run: (leadership) => bound.call(instance, leadership) });
      }
    }
  }
}
