import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { GraphQLModule } from '@nestjs/graphql';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { LockExceptionFilter } from 'nest-lock';
import { AuditController, AuditListener } from './audit.listener.js';
import { lockModule } from './lock-store.js';
import { ReportController } from './report.controller.js';
import { ReportGateway } from './report.gateway.js';
import { JobsController, QUEUES, ReportProcessor, WaitingReportProcessor } from './report.processor.js';
import { ReportResolver } from './report.resolver.js';

/** Express: GraphQL with Apollo, microservices (TCP, Redis), a socket.io gateway, @OnEvent, a BullMQ worker. */
@Module({
  imports: [
    lockModule(),
    EventEmitterModule.forRoot(),
    GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
    BullModule.forRoot({ connection: { host: '127.0.0.1', port: 6379 } }),
    BullModule.registerQueue({ name: QUEUES.delay }, { name: QUEUES.wait }),
  ],
  controllers: [ReportController, AuditController, JobsController],
  providers: [ReportResolver, ReportGateway, AuditListener, ReportProcessor, WaitingReportProcessor, { provide: APP_FILTER, useClass: LockExceptionFilter }],
})
export class AppModule {}

/** Fastify: GraphQL with Mercurius. */
@Module({
  imports: [lockModule(), GraphQLModule.forRoot<MercuriusDriverConfig>({ driver: MercuriusDriver, autoSchemaFile: true })],
  providers: [ReportResolver, { provide: APP_FILTER, useClass: LockExceptionFilter }],
})
export class MercuriusAppModule {}

/** The same gateway on the `ws` adapter (an adapter is chosen per app). */
@Module({ imports: [lockModule()], providers: [ReportGateway] })
export class WsAppModule {}
