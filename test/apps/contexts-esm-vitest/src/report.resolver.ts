import { Query, Resolver } from '@nestjs/graphql';
import { Locked } from 'nest-lock';
import { work } from './lock-store.js';

@Resolver()
export class ReportResolver {
  /** One report at a time: a second caller gets a CONFLICT error for this field. */
  @Query(() => String, { nullable: true })
  @Locked('gql-report')
  async report(): Promise<string> {
    await work();
    return 'done';
  }

  /** Needs no lock: resolves while `report` fails. */
  @Query(() => String)
  ping(): string {
    return 'pong';
  }
}
