import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { TaskDueTimer } from './due-timer';
import { taskHandlers } from './tasks.handler';

/**
 * Tasks as app.ts wires them: crm.v1.TaskService on the service's gRPC server, and the due timer that raises
 * task.due (started and stopped with the service's other workers).
 */
export function tasksFeature(deps: Deps, server: GrpcServer) {
  server.add(serviceDefinition(loadProto('crm/v1/tasks.proto'), 'crm.v1.TaskService'), taskHandlers(deps));
  const timer = new TaskDueTimer(deps);
  return { start: () => timer.start(), stop: () => timer.stop() };
}
