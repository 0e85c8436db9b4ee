import { Context, GqlExecutionContext, Query, Resolver } from '@nestjs/graphql';
import { currentLock, Locked } from 'nest-lock';
import { work } from './lock-store.js';

/** The GraphQL context: Apollo's has the request, Mercurius' the reply. */
type GqlContext = { req?: { headers: Record<string, string> }; reply?: { request: { headers: Record<string, string> } } };
const tenantOf = (ctx: GqlContext) => (ctx.req ?? ctx.reply!.request).headers['x-tenant'];

@Resolver()
export class ReportResolver {
  /** One report at a time: a second caller gets a CONFLICT error for this field. */
  @Query(() => String, { nullable: true })
  @Locked('gql-report')
  async report(): Promise<string> {
    await work();
    return 'done';
  }

  /** One report per tenant at a time: the lock's name comes from the context (a header of the request). */
  @Query(() => String, { nullable: true })
  @Locked((ctx: GqlContext) => `tenant:${tenantOf(ctx)}`)
  async tenantReport(@Context() ctx: GqlContext): Promise<string> {
    await work();
    return tenantOf(ctx);
  }

  /** The same, named from Nest's ExecutionContext (nameFromContext): no @Context() parameter. */
  @Query(() => String, { nullable: true })
  @Locked({ nameFromContext: (ctx) => `ctx-tenant:${ctx ? tenantOf(GqlExecutionContext.create(ctx).getContext<GqlContext>()) : 'none'}` })
  async tenantReportByContext(): Promise<string> {
    await work();
    return currentLock()!.name.slice('ctx-tenant:'.length);
  }

  /** Needs no lock: resolves while `report` fails. */
  @Query(() => String)
  ping(): string {
    return 'pong';
  }
}
