import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';

/**
 * Lets in requests from this machine only: the sample's stand-in for your own
 * admin authentication in front of the lock page (lock names can carry ids).
 */
@Injectable()
export class LocalhostGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ socket: { remoteAddress?: string } }>();
    return ['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(request.socket.remoteAddress ?? '');
  }
}
