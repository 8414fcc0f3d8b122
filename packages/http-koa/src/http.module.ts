import { ContainerModule } from 'inversify';
import { ACCESS_SETTINGS, AccessControl, type AccessSettings } from './access/access.js';
import { type HttpSettings } from './config.js';
import { countingIngest, HTTP_METRICS, HttpMetrics } from './edge/metrics.js';
import { httpUseCaseClasses, type HttpUseCases } from './routes/routing.js';
import { HTTP_SETTINGS, HTTP_USE_CASES, HttpServer } from './server.js';

/**
 * Binds what the HTTP transport adds to the core: its settings, access control, metrics, the use cases
 * its routes call and the server itself. The store, the logger, the access-key secrets and the code host's
 * commit feed (an outbound client, in @hortus/mail) come from the composition root.
 */
export function httpModule(settings: HttpSettings): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<HttpSettings>(HTTP_SETTINGS).toConstantValue(settings);
    bind<AccessSettings>(ACCESS_SETTINGS).toConstantValue({
      mode: settings.auth,
      cacheMs: settings.authCacheMs,
    });
    bind<AccessControl>(AccessControl).toSelf().inSingletonScope();
    bind<HttpMetrics>(HTTP_METRICS).toConstantValue(new HttpMetrics());
    bind<HttpUseCases>(HTTP_USE_CASES)
      .toDynamicValue((context) => {
        const useCases = Object.fromEntries(
          Object.entries(httpUseCaseClasses).map(([name, useCase]) => [name, context.get<object>(useCase)]),
        ) as unknown as HttpUseCases;
        const metrics = context.get<HttpMetrics>(HTTP_METRICS);
        return { ...useCases, recordReadings: countingIngest(useCases.recordReadings, metrics) };
      })
      .inSingletonScope();
    bind(HttpServer).toSelf().inSingletonScope();
  });
}
