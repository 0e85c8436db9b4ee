import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Transport } from '@nestjs/microservices';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { WsAdapter } from '@nestjs/platform-ws';
import { AppModule, MercuriusAppModule, WsAppModule } from './app.module.js';

async function bootstrap() {
  const app = await NestFactory.create(AppModule);
  const tcpPort = Number(process.env.TCP_PORT ?? 4010);
  app.connectMicroservice({ transport: Transport.TCP, options: { host: '127.0.0.1', port: tcpPort } }, { inheritAppConfig: true });
  app.connectMicroservice({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } }, { inheritAppConfig: true });
  await app.startAllMicroservices();
  await app.listen(0, '127.0.0.1');
  const mercurius = await NestFactory.create(MercuriusAppModule, new FastifyAdapter());
  await mercurius.listen(0, '127.0.0.1');
  const ws = await NestFactory.create(WsAppModule);
  ws.useWebSocketAdapter(new WsAdapter(ws));
  await ws.listen(0, '127.0.0.1');
  new Logger('Bootstrap').log(`Ready: apollo ${await app.getUrl()} mercurius ${await mercurius.getUrl()} ws ${await ws.getUrl()} tcp ${tcpPort}`);
}
await bootstrap();
