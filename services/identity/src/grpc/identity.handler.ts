import type { HandlersFor } from '@crm/grpc-kit';
import * as availability from '../availability';
import type { Deps } from '../deps';
import * as apiKeys from '../domain/api-keys';
import * as audit from '../domain/audit';
import * as namedApiKeys from '../domain/named-api-keys';
import * as auth from '../domain/auth';
import * as notificationPreferences from '../domain/notification-preferences';
import { logout, refresh } from '../domain/sessions';
import * as teams from '../domain/teams';
import * as users from '../domain/users';

/** identity.v1.IdentityService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function identityHandlers(deps: Deps): HandlersFor<'identity.v1.IdentityService'> {
  return {
    GetSetupStatus: () => auth.setupStatus(deps),
    Setup: (req) => auth.setup(deps, req),
    Signup: (req) => auth.signup(deps, req),
    Login: (req, ctx) => auth.login(deps, req, ctx),
    Refresh: (req, ctx) => refresh(deps, ctx, req.refreshToken),
    Logout: (req) => logout(deps, req.refreshToken, req.jti, Number(req.accessExpiresAt)),
    AcceptInvitation: (req) => auth.acceptInvitation(deps, req),

    GetProfile: (_req, ctx) => users.profile(deps, ctx),
    ListUsers: (req, ctx) => users.list(deps, ctx, req),
    GetUser: (req, ctx) => users.get(deps, ctx, req.id),
    CreateUser: (req, ctx) => users.create(deps, ctx, req),
    UpdateUser: (req, ctx) => users.update(deps, ctx, req),
    DeactivateUser: (req, ctx) => users.deactivate(deps, ctx, req.id),
    GetNotificationPreferences: (_req, ctx) => notificationPreferences.get(deps, ctx),
    SetNotificationPreferences: (req, ctx) => notificationPreferences.set(deps, ctx, req),
    GetAvailability: (_req, ctx) => availability.getAvailability(deps, ctx),
    SetAvailability: (req, ctx) => availability.setAvailability(deps, ctx, req),
    ReportPresence: (req, ctx) => availability.reportPresence(deps, ctx, req),

    ListTeams: (_req, ctx) => teams.list(deps, ctx),
    GetTeam: (req, ctx) => teams.get(deps, ctx, req.id),
    CreateTeam: (req, ctx) => teams.create(deps, ctx, req),
    UpdateTeam: (req, ctx) => teams.update(deps, ctx, req),
    DeleteTeam: (req, ctx) => teams.remove(deps, ctx, req.id),

    GetApiKey: (_req, ctx) => apiKeys.info(deps, ctx),
    GenerateApiKey: (_req, ctx) => apiKeys.generate(deps, ctx),
    VerifyApiKey: (req) => apiKeys.verify(deps, req.apiKey),
    CreateNamedApiKey: (req, ctx) => namedApiKeys.create(deps, ctx, req),
    ListNamedApiKeys: (req, ctx) => namedApiKeys.list(deps, ctx, req),
    RevokeNamedApiKey: (req, ctx) => namedApiKeys.revoke(deps, ctx, req.id),
    GetApiSettings: (_req, ctx) => namedApiKeys.getSettings(deps, ctx),
    SetApiSettings: (req, ctx) => namedApiKeys.setSettings(deps, ctx, req),
    RecordApiKeyUse: (req, ctx) => namedApiKeys.recordUse(deps, ctx, req.id),

    ListAuditLog: (req, ctx) => audit.list(deps, ctx, req),
  };
}
