import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as tasks from './tasks';

/** crm.v1.TaskService: decode, call the use case, return; errors are mapped by grpc-kit. */
export function taskHandlers(deps: Deps): HandlersFor<'crm.v1.TaskService'> {
  return {
    ListTasks: (req, ctx) => tasks.list(deps, ctx, req),
    GetTask: (req, ctx) => tasks.get(deps, ctx, req.id),
    CreateTask: (req, ctx) => tasks.create(deps, ctx, req),
    UpdateTask: (req, ctx) => tasks.update(deps, ctx, req),
    DeleteTask: (req, ctx) => tasks.remove(deps, ctx, req.id),
  };
}
